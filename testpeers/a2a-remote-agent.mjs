// The Node remote agent: an @a2a-js/sdk server (its AgentExecutor,
// DefaultRequestHandler and JSON-RPC transport handler) that a Go test
// delegates to. Each message chooses what its task does, with the commands
// of the Go peers (internal/a2apeers, doc.go): complete, echo, artifacts:N,
// ask-input, auth-required[:D], slow:D, fail, reject, unknown-state[:D],
// cancel-races-complete.
//
//   node testpeers/a2a-remote-agent.mjs '<config JSON>'
//
// config: {"publicURL": base URL the card names (the Go side's recording
// proxy), "tenant"?: AgentInterface.tenant, "bearerToken"?: required
// bearer token, "skills"?: AgentSkill JSON list}.
//
// It listens on 127.0.0.1:0 and prints "PORT <n>" on stdout, serves the
// A2A 1.0 card at /.well-known/agent-card.json and JSON-RPC at /jsonrpc,
// and exits when its stdin closes. The HTTP glue mirrors the SDK's Express
// jsonRpcHandler (version check, extensions, SSE framing) on node:http,
// because express is not a dependency of testpeers; for the same reason
// there is no HTTP+JSON interface (the SDK's REST adapter needs express).

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import {
  AgentCard,
  Extensions,
  HTTP_EXTENSION_HEADER,
  Message,
  Part,
  SSE_HEADERS,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
  formatSSEErrorEvent,
  formatSSEEvent,
} from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  defaultServerCallContextBuilder,
  validateVersion,
} from '@a2a-js/sdk/server';

const config = JSON.parse(process.argv[2] ?? '{}');
if (!config.publicURL) {
  console.error("usage: node a2a-remote-agent.mjs '{\"publicURL\":\"http://127.0.0.1:PORT\"}'");
  process.exit(2);
}

// The texts and ids the Go peer uses (internal/a2apeers/script.go).
const COMPLETED_TEXT = 'completed';
const QUESTION_TEXT = 'which value should I use?';
const AUTH_TEXT = 'authorize the agent to continue';
const FAILURE_TEXT = 'scripted failure';
const REJECTION_TEXT = 'scripted rejection';
const RESULT_ID = 'result';
const ECHO_ID = 'echo';
const UNKNOWN_STATE = 'TASK_STATE_SCRIPTED_UNKNOWN';
const COMMANDS_HELP =
  'complete | echo | artifacts:N | ask-input | auth-required[:D] | slow:D | fail | reject | unknown-state[:D] | cancel-races-complete';

// --- commands --------------------------------------------------------------

// goDuration parses a Go duration ("20ms", "1m30s") into milliseconds, or
// returns NaN.
function goDuration(s) {
  const units = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let ms = 0;
  let m;
  let end = 0;
  while ((m = re.exec(s)) !== null) {
    ms += Number(m[1]) * units[m[2]];
    end = re.lastIndex;
  }
  return s !== '' && end === s.length ? ms : NaN;
}

// parseCommand reads text as a command, or returns undefined for text that
// names none. An unreadable argument gives {error}, which fails the task.
function parseCommand(text) {
  const i = text.indexOf(':');
  const name = i < 0 ? text : text.slice(0, i);
  const arg = i < 0 ? undefined : text.slice(i + 1);
  switch (name) {
    case 'complete':
    case 'echo':
    case 'ask-input':
    case 'fail':
    case 'reject':
    case 'cancel-races-complete':
      return arg === undefined ? { name } : { name, error: `${name} takes no argument` };
    case 'artifacts': {
      const n = /^[+-]?\d+$/.test(arg ?? '') ? Number(arg) : NaN;
      return n >= 1 ? { name, n } : { name, error: `artifacts:N needs N >= 1, got ${JSON.stringify(arg ?? '')}` };
    }
    case 'slow':
    case 'auth-required':
    case 'unknown-state': {
      if (arg === undefined && name !== 'slow') return { name, wait: 0 };
      const wait = goDuration(arg ?? '');
      return wait > 0
        ? { name, wait }
        : { name, error: `${name}:DURATION needs a positive Go duration, got ${JSON.stringify(arg ?? '')}` };
    }
    default:
      return undefined;
  }
}

// commandOf: the first text part that is a command, else the first data
// part's "command" field, else echo.
function commandOf(message) {
  for (const p of message.parts) {
    if (p.content?.$case === 'text') {
      const c = parseCommand(p.content.value.trim());
      if (c) return c;
    }
  }
  for (const p of message.parts) {
    const command = p.content?.$case === 'data' ? p.content.value?.command : undefined;
    if (typeof command === 'string') {
      const c = parseCommand(command);
      if (c) return c;
    }
  }
  return { name: 'echo' };
}

// --- events ----------------------------------------------------------------

function status(ids, state, text) {
  const message = text
    ? { messageId: randomUUID(), role: 'ROLE_AGENT', taskId: ids.taskId, contextId: ids.contextId, parts: [{ text }] }
    : undefined;
  return AgentEvent.statusUpdate(
    TaskStatusUpdateEvent.fromJSON({ ...ids, status: { state, message, timestamp: new Date().toISOString() } }),
  );
}

function artifact(ids, artifactId, append, lastChunk, parts) {
  return AgentEvent.artifactUpdate(
    TaskArtifactUpdateEvent.fromJSON({ ...ids, append, lastChunk, artifact: { artifactId, name: artifactId, parts } }),
  );
}

const text = (t) => ({ text: t });
const result = (ids) => artifact(ids, RESULT_ID, false, true, [text(COMPLETED_TEXT)]);

// --- the agent -------------------------------------------------------------

// Held tasks (slow, auth-required, unknown-state, cancel-races-complete)
// wait here until their duration passes (true) or a cancel arrives (false).
const held = new Map();
const tasks = new Map(); // taskId -> {contextId, command}

function hold(taskId, ms) {
  return new Promise((resolve) => {
    const timer = ms > 0 ? setTimeout(() => release(taskId, true), ms) : undefined;
    held.set(taskId, (elapsed) => {
      clearTimeout(timer);
      held.delete(taskId);
      resolve(elapsed);
    });
  });
}

function release(taskId, elapsed) {
  held.get(taskId)?.(elapsed);
}

class ScriptedAgent {
  async execute(rc, bus) {
    const ids = { taskId: rc.taskId, contextId: rc.contextId };
    const parts = rc.userMessage.parts.map((p) => Part.toJSON(p));
    if (rc.task) {
      // A follow-up message answers ask-input: echoed, completed. The SDK
      // wants the task as the first event of every turn.
      bus.publish(AgentEvent.task(rc.task));
      bus.publish(artifact(ids, ECHO_ID, false, true, parts));
      bus.publish(status(ids, 'TASK_STATE_COMPLETED'));
      return;
    }
    const c = commandOf(rc.userMessage);
    tasks.set(rc.taskId, { contextId: rc.contextId, command: c.name });
    bus.publish(
      AgentEvent.task(
        Task.fromJSON({ id: rc.taskId, contextId: rc.contextId, status: { state: 'TASK_STATE_SUBMITTED' }, history: [Message.toJSON(rc.userMessage)] }),
      ),
    );
    const complete = () => {
      bus.publish(result(ids));
      bus.publish(status(ids, 'TASK_STATE_COMPLETED'));
    };
    if (c.error) {
      bus.publish(status(ids, 'TASK_STATE_FAILED', c.error));
      return;
    }
    switch (c.name) {
      case 'complete':
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        complete();
        break;
      case 'echo':
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        bus.publish(artifact(ids, ECHO_ID, false, true, parts));
        bus.publish(status(ids, 'TASK_STATE_COMPLETED'));
        break;
      case 'artifacts':
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        for (let i = 1; i <= c.n; i++) {
          bus.publish(artifact(ids, `artifact-${i}`, false, false, [text(`artifact ${i} chunk 1`)]));
          bus.publish(artifact(ids, `artifact-${i}`, true, true, [text(`artifact ${i} chunk 2`)]));
        }
        bus.publish(status(ids, 'TASK_STATE_COMPLETED'));
        break;
      case 'ask-input':
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        bus.publish(status(ids, 'TASK_STATE_INPUT_REQUIRED', QUESTION_TEXT));
        break;
      case 'auth-required':
        bus.publish(status(ids, 'TASK_STATE_AUTH_REQUIRED', AUTH_TEXT));
        if (await hold(rc.taskId, c.wait)) complete();
        break;
      case 'slow':
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        if (await hold(rc.taskId, c.wait)) complete();
        break;
      case 'fail':
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        bus.publish(status(ids, 'TASK_STATE_FAILED', FAILURE_TEXT));
        break;
      case 'reject':
        bus.publish(status(ids, 'TASK_STATE_REJECTED', REJECTION_TEXT));
        break;
      case 'unknown-state':
        // The SDK holds states as an enum: a name outside it is written
        // back as "UNRECOGNIZED".
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        bus.publish(status(ids, UNKNOWN_STATE));
        if (await hold(rc.taskId, c.wait)) complete();
        break;
      case 'cancel-races-complete':
        // Held until a cancel arrives: cancelTask completes the task.
        bus.publish(status(ids, 'TASK_STATE_WORKING'));
        await hold(rc.taskId, 0);
        break;
    }
  }

  // cancelTask cancels the task, except a cancel-races-complete task,
  // which completes with its result instead.
  async cancelTask(taskId, bus) {
    const t = tasks.get(taskId);
    const ids = { taskId, contextId: t?.contextId ?? '' };
    if (t?.command === 'cancel-races-complete') {
      bus.publish(result(ids));
      bus.publish(status(ids, 'TASK_STATE_COMPLETED'));
    } else {
      bus.publish(status(ids, 'TASK_STATE_CANCELED'));
    }
    release(taskId, false);
  }
}

// --- the card --------------------------------------------------------------

const skills = config.skills ?? [
  {
    id: 'scripted',
    name: 'Scripted agent',
    description: 'Runs the command the message names: ' + COMMANDS_HELP,
    tags: ['test'],
    examples: ['complete', 'artifacts:3', 'ask-input'],
  },
];
const card = AgentCard.fromJSON({
  name: 'a2apeers scripted agent (@a2a-js/sdk)',
  description: 'A scripted A2A agent for tests.',
  version: '1.0.0',
  supportedInterfaces: [
    { url: config.publicURL + '/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: config.tenant ?? '' },
  ],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain', 'application/json'],
  skills,
  ...(config.bearerToken
    ? {
        securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
        securityRequirements: [{ schemes: { bearer: { list: [] } } }],
      }
    : {}),
});
const cardJSON = JSON.stringify(AgentCard.toJSON(card));

// --- HTTP ------------------------------------------------------------------

const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new ScriptedAgent());
const transport = new JsonRpcTransportHandler(requestHandler);

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function idOf(body) {
  try {
    const id = JSON.parse(body)?.id;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

function sendJSON(res, statusCode, value, headers = {}) {
  res.writeHead(statusCode, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

async function serveJSONRPC(req, res) {
  const body = await readBody(req);
  if (config.bearerToken && req.headers.authorization !== `Bearer ${config.bearerToken}`) {
    const info = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAUTHENTICATED', domain: 'a2a-protocol.org' };
    sendJSON(res, 401, { jsonrpc: '2.0', id: idOf(body), error: { code: -31401, message: 'unauthenticated', data: [info] } }, {
      'WWW-Authenticate': 'Bearer realm="a2apeers"',
    });
    return;
  }
  const context = defaultServerCallContextBuilder({
    extensions: Extensions.parseServiceParameter(req.headers[HTTP_EXTENSION_HEADER.toLowerCase()]),
    user: new UnauthenticatedUser(),
    headers: req.headers,
    requestedVersion: req.headers['a2a-version'] || undefined,
  });
  try {
    validateVersion(context.requestedVersion, card, 'JSONRPC');
  } catch (error) {
    sendJSON(res, 200, { jsonrpc: '2.0', id: idOf(body), error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    return;
  }
  const out = await transport.handle(body, context);
  const headers = context.activatedExtensions ? { [HTTP_EXTENSION_HEADER]: [...context.activatedExtensions].join(',') } : {};
  if (typeof out?.[Symbol.asyncIterator] !== 'function') {
    sendJSON(res, 200, out, headers);
    return;
  }
  // A stream: an error before its first event is a plain JSON-RPC
  // response; after it, an SSE error event (as the Express adapter does).
  const it = out[Symbol.asyncIterator]();
  let first;
  try {
    first = await it.next();
  } catch (error) {
    sendJSON(res, 200, { jsonrpc: '2.0', id: idOf(body), error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    return;
  }
  res.writeHead(200, { ...SSE_HEADERS, ...headers });
  try {
    for (let r = first; !r.done; r = await it.next()) res.write(formatSSEEvent(r.value));
  } catch (error) {
    res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id: idOf(body), error: JsonRpcTransportHandler.mapToJSONRPCError(error) }));
  }
  res.end();
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url, 'http://peer').pathname;
  let done;
  if (req.method === 'GET' && path === '/.well-known/agent-card.json') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(cardJSON);
    return;
  } else if (req.method === 'POST' && path === '/jsonrpc') {
    done = serveJSONRPC(req, res);
  } else {
    sendJSON(res, 404, { error: 'not found' });
    return;
  }
  done.catch((error) => {
    console.error('a2a-remote-agent:', error);
    if (!res.headersSent) sendJSON(res, 500, { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'internal error' } });
    else res.end();
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
});

// The Go side closes stdin when its test ends; nothing outlives it.
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
