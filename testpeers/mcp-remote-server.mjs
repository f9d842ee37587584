// The Node MCP server: the TypeScript SDK's 2026-07-28 server
// (@modelcontextprotocol/server 2.x: McpServer behind createMcpHandler,
// one fresh McpServer per HTTP request, no session) running the scripted
// tools of the Go peers (internal/mcppeers, doc.go) for a Go test that
// drives it as an MCP client: echo, needs_input, needs_input_loop,
// url_input, slow, fails, annotated; any other name behaves as echo.
//
//   node testpeers/mcp-remote-server.mjs '<config JSON>'
//
// config: {"publicURL": base URL the client sees (the Go side's recording
// proxy), "revisions": MCP revisions to serve (must list 2026-07-28, and
// only revisions the SDK knows; any earlier one turns on the SDK's
// stateless legacy fallback),
// "bearerToken"?: required bearer token, "callerTools"?: {token: [Tool]}
// (tools only that caller sees and may call, each behaving as echo),
// "tools": [Tool] (MCP Tool JSON), "listCache"?: {ttlMs, cacheScope} for
// tools/list, "responseMode"?: "auto" | "json" | "sse"}.
//
// It listens on 127.0.0.1:0, prints "PORT <n>" on stdout, and serves MCP at
// /mcp (and, with a bearer token, the RFC 9728 metadata of /mcp). Then each
// stdout line is one JSON event for the Go side:
//   {"slow": {"seq", "id", "outcome"}}  a slow call started or ended
//   {"ack": seq}                         a command was applied
// and each stdin line one JSON command:
//   {"seq", "setTools": [Tool]}          replace the tool list
//   {"seq", "stop": true}                end every slow call still waiting
// It exits when its stdin closes. The HTTP glue adapts node:http to the
// handler's fetch face (what @modelcontextprotocol/node's toNodeHandler
// does; that package is not a dependency of testpeers).

import http from 'node:http';
import readline from 'node:readline';
import {
  McpServer,
  OAuthError,
  OAuthErrorCode,
  ProtocolError,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  requireBearerAuth,
} from '@modelcontextprotocol/server';

const config = JSON.parse(process.argv[2] ?? '{}');
if (!config.publicURL || !Array.isArray(config.tools)) {
  console.error('usage: node mcp-remote-server.mjs \'{"publicURL":"http://127.0.0.1:PORT","tools":[...]}\'');
  process.exit(2);
}

// The names and texts the Go peer uses (internal/mcppeers/tools.go).
const CURRENT = '2026-07-28';
const MCP_PATH = '/mcp';
const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource' + MCP_PATH;
const NEEDS_INPUT_KEY = 'needs_input/name';
const LOOP_KEY = 'needs_input_loop/name';
const URL_INPUT_KEY = 'url_input/authorize';
const NEEDS_INPUT_STATE = 'needs_input:v1 "q" \\ <&> \u2028 \u0000 \u{1F600} \t\n+/= end';
const LOOP_STATE_PREFIX = 'loop:';
const URL_INPUT_STATE = 'url_input:1';
const URL_ELICITATION_ID = 'url_input-elicitation-1';
const AUTHORIZE_PATH = '/authorize/';
const NEEDS_INPUT_MESSAGE = 'What is your name?';
const URL_INPUT_MESSAGE = 'Authorize the peer to continue';
const AUTHORIZED_TEXT = 'authorized';
const FAILURE_TEXT = 'scripted failure';
const DECLINED_TEXT = 'declined';
const CANCELLED_TEXT = 'cancelled';
const SLEPT_TEXT = 'slept';
const FORM_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string', description: 'Your name' } },
  required: ['name'],
};
const IMPLEMENTATION = { name: 'mcppeers', version: '1.0.0' };

const revisions = config.revisions ?? [CURRENT];
if (!revisions.includes(CURRENT)) {
  console.error(`mcp-remote-server: revisions ${JSON.stringify(revisions)} lack ${CURRENT}: createMcpHandler always serves it`);
  process.exit(2);
}
const unknown = revisions.filter((r) => r !== CURRENT && !SUPPORTED_PROTOCOL_VERSIONS.includes(r));
if (unknown.length > 0) {
  console.error(`mcp-remote-server: the SDK does not know revisions ${JSON.stringify(unknown)} (it knows ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
  process.exit(2);
}

const emit = (event) => process.stdout.write(JSON.stringify(event) + '\n');
const text = (t) => ({ type: 'text', text: t });
const failed = (t) => ({ content: [text(t)], isError: true });

// --- the retry checks --------------------------------------------------------

// A retry whose requestState or inputResponses this server cannot accept is
// refused in the SDK's requestState.verify seam: that is where the SDK
// answers a retry with JSON-RPC -32602 (message "Invalid or expired
// requestState", data {reason: "invalid_request_state"}). McpServer turns
// anything a tool handler throws into an isError result instead.
class Refused extends Error {}

// elicitAnswer is the retry's elicitation result under key, or throws.
function elicitAnswer(responses, key) {
  const r = inputResponse(responses, key);
  if (r.kind !== 'elicit' || !['accept', 'decline', 'cancel'].includes(r.action)) {
    throw new Refused(`inputResponses lacks an elicitation result for ${JSON.stringify(key)}`);
  }
  return r;
}

// verifiers check a retry of the named tool before its handler runs.
const verifiers = {
  needs_input(state, responses) {
    if (state !== NEEDS_INPUT_STATE) throw new Refused(`requestState ${JSON.stringify(state)} is not the one this server issued`);
    const r = elicitAnswer(responses, NEEDS_INPUT_KEY);
    if (r.action === 'accept' && !(typeof r.content?.name === 'string' && r.content.name !== '')) {
      throw new Refused('the accepted elicitation has no name');
    }
  },
  needs_input_loop(state, responses) {
    if (loopRound(state) === undefined) throw new Refused(`requestState ${JSON.stringify(state)} is not the one this server issued`);
    elicitAnswer(responses, LOOP_KEY);
  },
  url_input(state, responses) {
    if (state !== URL_INPUT_STATE) throw new Refused(`requestState ${JSON.stringify(state)} is not the one this server issued`);
    elicitAnswer(responses, URL_INPUT_KEY);
  },
};

// loopRound is n of "loop:<n>" (n >= 1), else undefined.
function loopRound(state) {
  const m = /^loop:([1-9][0-9]*)$/.exec(state ?? '');
  return m ? Number(m[1]) : undefined;
}

// isRetry: the call carries a requestState or inputResponses.
const isRetry = (ctx) => ctx.mcpReq.requestState() !== undefined || Object.keys(ctx.mcpReq.inputResponses ?? {}).length > 0;

// noState is the refusal of a retry without requestState, which the
// verify seam never sees (it runs only when a state is present).
const noState = () => new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState "" is not the one this server issued');

// --- the tools ---------------------------------------------------------------

// echo returns the arguments as received (parsed and written back by
// JavaScript), as text and as structuredContent.
function echo(call) {
  const args = call?.params?.arguments ?? {};
  return { content: [text(JSON.stringify(args))], structuredContent: args };
}

function needsInput(ctx) {
  if (!isRetry(ctx)) {
    return inputRequired({
      inputRequests: { [NEEDS_INPUT_KEY]: inputRequired.elicit({ message: NEEDS_INPUT_MESSAGE, requestedSchema: FORM_SCHEMA }) },
      requestState: NEEDS_INPUT_STATE,
    });
  }
  if (ctx.mcpReq.requestState() === undefined) throw noState();
  const r = inputResponse(ctx.mcpReq.inputResponses, NEEDS_INPUT_KEY);
  if (r.action === 'decline') return failed(DECLINED_TEXT);
  if (r.action === 'cancel') return failed(CANCELLED_TEXT);
  const greeting = `hello ${r.content.name}`;
  return { content: [text(greeting)], structuredContent: { greeting } };
}

function needsInputLoop(ctx) {
  let round = 1;
  if (isRetry(ctx)) {
    const state = ctx.mcpReq.requestState();
    if (state === undefined) throw noState();
    round = loopRound(state) + 1;
  }
  return inputRequired({
    inputRequests: { [LOOP_KEY]: inputRequired.elicit({ message: NEEDS_INPUT_MESSAGE, requestedSchema: FORM_SCHEMA }) },
    requestState: LOOP_STATE_PREFIX + round,
  });
}

// urlInput asks by URL-mode elicitation. The SDK's 2026-07-28 builder has
// no elicitationId (correlation is the server's, inside requestState).
function urlInput(ctx) {
  if (!isRetry(ctx)) {
    return inputRequired({
      inputRequests: {
        [URL_INPUT_KEY]: inputRequired.elicitUrl({ message: URL_INPUT_MESSAGE, url: config.publicURL + AUTHORIZE_PATH + URL_ELICITATION_ID }),
      },
      requestState: URL_INPUT_STATE,
    });
  }
  if (ctx.mcpReq.requestState() === undefined) throw noState();
  const r = inputResponse(ctx.mcpReq.inputResponses, URL_INPUT_KEY);
  if (r.action === 'decline') return failed(DECLINED_TEXT);
  if (r.action === 'cancel') return failed(CANCELLED_TEXT);
  return { content: [text(AUTHORIZED_TEXT)] };
}

// Slow calls still waiting, by seq; stop ends them all.
const waiting = new Map();
let slowSeq = 0;

// slow waits for its ms, the end of the request (the client went away),
// or a stop command, and reports each call's start and end on stdout.
function slow(call, ctx) {
  const ms = call?.params?.arguments?.ms;
  const seq = slowSeq++;
  const id = ctx.mcpReq.id;
  emit({ slow: { seq, id, outcome: 'running' } });
  return new Promise((resolve) => {
    let timer;
    const end = (outcome, result) => {
      if (!waiting.delete(seq)) return;
      clearTimeout(timer);
      ctx.mcpReq.signal.removeEventListener('abort', onAbort);
      emit({ slow: { seq, id, outcome } });
      resolve(result);
    };
    const onAbort = () => end('cancelled', failed('cancelled by the client'));
    waiting.set(seq, () => end('stopped', failed('mcppeers: server stopped')));
    if (typeof ms === 'number' && ms > 0) timer = setTimeout(() => end('elapsed', { content: [text(SLEPT_TEXT)] }), ms);
    if (ctx.mcpReq.signal.aborted) onAbort();
    else ctx.mcpReq.signal.addEventListener('abort', onAbort);
  });
}

// annotated returns one content block of each kind with annotations and
// _meta; with a progressToken it first sends two progress notifications,
// which turns the SDK's "auto" response into an SSE stream.
async function annotated(ctx) {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token !== undefined) {
    for (let i = 1; i <= 2; i++) {
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress: i, total: 2, message: `step ${i} of 2` },
      });
    }
  }
  const ann = (audience, priority) => ({ audience: [audience], priority, lastModified: '2026-07-28T00:00:00Z' });
  return {
    _meta: { 'mcppeers/result': 'annotated' },
    content: [
      { type: 'text', text: 'annotated text', annotations: ann('user', 0.9), _meta: { 'mcppeers/block': 'text' } },
      { type: 'image', mimeType: 'image/png', data: Buffer.from('\x89PNG\r\n\x1a\n', 'latin1').toString('base64'), annotations: ann('assistant', 0.1) },
      { type: 'audio', mimeType: 'audio/wav', data: Buffer.from('RIFF').toString('base64'), _meta: { 'mcppeers/block': 'audio' } },
      {
        type: 'resource_link', uri: 'https://example.invalid/report.txt', name: 'report', title: 'Report', mimeType: 'text/plain',
        size: 11, annotations: ann('user', 0.5), _meta: { 'mcppeers/block': 'resource_link', etag: 'v1' },
      },
      { type: 'resource', resource: { uri: 'mem://notes', mimeType: 'text/plain', text: 'embedded notes' }, annotations: ann('assistant', 0.2) },
    ],
    structuredContent: { kinds: ['text', 'image', 'audio', 'resource_link', 'resource'] },
  };
}

// behaviour is what a tool of this name runs, given the JSON-RPC request
// as sent and the handler context.
function behaviour(name) {
  switch (name) {
    case 'needs_input':
      return (_call, ctx) => needsInput(ctx);
    case 'needs_input_loop':
      return (_call, ctx) => needsInputLoop(ctx);
    case 'url_input':
      return (_call, ctx) => urlInput(ctx);
    case 'slow':
      return slow;
    case 'fails':
      return () => failed(FAILURE_TEXT);
    case 'annotated':
      return (_call, ctx) => annotated(ctx);
    default:
      return echo;
  }
}

// --- the server --------------------------------------------------------------

let tools = config.tools;
const callerTools = config.callerTools ?? {};

// calls maps each HTTP request in flight to the JSON-RPC message it
// carries, for the factory and the handlers to read the tool name and the
// arguments as sent. The key travels in the CALL_HEADER of the request
// handed to the SDK (the SDK's legacy leg serves a clone of it).
const calls = new Map();
const CALL_HEADER = 'x-mcppeers-call';
let callSeq = 0;

function register(server, tool, run, call) {
  server.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: fromJsonSchema(tool.inputSchema ?? { type: 'object' }),
      ...(tool.outputSchema && { outputSchema: fromJsonSchema(tool.outputSchema) }),
      annotations: tool.annotations,
      _meta: tool._meta,
    },
    (_args, ctx) => run(call, ctx),
  );
}

// factory builds the McpServer for one HTTP request: the current tool
// list, the caller's own tools, and a requestState check for the tool the
// request calls.
function factory({ authInfo, requestInfo }) {
  const call = calls.get(requestInfo?.headers.get(CALL_HEADER));
  const toolName = call?.method === 'tools/call' ? call.params?.name : undefined;
  const listed = tools;
  const server = new McpServer(IMPLEMENTATION, {
    supportedProtocolVersions: revisions,
    capabilities: { tools: { listChanged: true } },
    ...(config.listCache && { cacheHints: { 'tools/list': config.listCache } }),
    requestState: {
      verify(state, ctx) {
        const own = listed.some((t) => t.name === toolName) ? verifiers[toolName] : undefined;
        own?.(state, ctx.mcpReq.inputResponses);
      },
    },
  });
  for (const tool of listed) register(server, tool, behaviour(tool.name), call);
  for (const tool of callerTools[authInfo?.clientId] ?? []) register(server, tool, echo, call);
  return server;
}

const handler = createMcpHandler(factory, {
  legacy: revisions.some((r) => r < CURRENT) ? 'stateless' : 'reject',
  responseMode: config.responseMode ?? 'auto',
  // What the SDK refused and why, for the Go side to show when a test fails.
  onerror: (error) => console.error('mcp-remote-server:', error.message),
});

const bearer =
  config.bearerToken || Object.keys(callerTools).length > 0
    ? requireBearerAuth({
        verifier: {
          async verifyAccessToken(token) {
            if (token !== config.bearerToken && !Object.hasOwn(callerTools, token)) {
              throw new OAuthError(OAuthErrorCode.InvalidToken, 'unknown token');
            }
            return { token, clientId: token, scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 86400 };
          },
        },
        resourceMetadataUrl: config.publicURL + PROTECTED_RESOURCE_PATH,
      })
    : undefined;

// --- HTTP --------------------------------------------------------------------

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

// toWebRequest is the fetch Request of a node:http request; signal aborts
// when the client goes away before the response is complete.
function toWebRequest(req, body, signal, key) {
  const headers = new Headers({ [CALL_HEADER]: key });
  for (const [name, value] of Object.entries(req.headers)) {
    if (name === CALL_HEADER) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(new URL(req.url, config.publicURL), { method: req.method, headers, body: hasBody ? body : undefined, signal });
}

async function writeWebResponse(res, response) {
  const headers = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on('close', () => reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // the client went away
  }
  res.end();
}

async function serveMCP(req, res) {
  const body = await readBody(req);
  const aborted = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  const key = String(callSeq++);
  const request = toWebRequest(req, body, aborted.signal, key);
  try {
    calls.set(key, JSON.parse(body.toString('utf8')));
  } catch {
    // not JSON: the handler answers it
  }
  res.on('close', () => calls.delete(key));
  let authInfo;
  if (bearer) {
    const verdict = await bearer(request);
    if (verdict instanceof Response) {
      await writeWebResponse(res, verdict);
      return;
    }
    authInfo = verdict;
  }
  await writeWebResponse(res, await handler.fetch(request, { authInfo }));
}

const server = http.createServer((req, res) => {
  const path = new URL(req.url, 'http://peer').pathname;
  if (bearer && req.method === 'GET' && path === PROTECTED_RESOURCE_PATH) {
    // RFC 9728 §2 metadata: a bearer token in the header and no
    // authorization server (the token is provisioned out of band).
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ bearer_methods_supported: ['header'], resource: config.publicURL + MCP_PATH }));
    return;
  }
  if (path !== MCP_PATH) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found');
    return;
  }
  serveMCP(req, res).catch((error) => {
    console.error('mcp-remote-server:', error);
    if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end();
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
});

// --- commands ----------------------------------------------------------------

const commands = readline.createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const c = JSON.parse(line);
  if (c.setTools) {
    tools = c.setTools;
    handler.notify.toolsChanged();
  }
  if (c.stop) {
    for (const stop of [...waiting.values()]) stop();
  }
  emit({ ack: c.seq });
});
// The Go side closes stdin when its test ends; nothing outlives it.
commands.on('close', () => {
  for (const stop of [...waiting.values()]) stop();
  process.exit(0);
});
