// The Node MCP peer: the TypeScript SDK's 2026-07-28 client
// (@modelcontextprotocol/client 2.x; the 1.x @modelcontextprotocol/sdk
// speaks at most 2025-11-25) drives a wopinterop host's /mcp through the
// scenario the Go peer runs (examples/host/mcp_peers_go_test.go).
//
//   node testpeers/mcp-peer.mjs <baseURL> <keyOfTenantA> <keyOfTenantB>
//
// Steps: connect (server/discover, no initialize), list tools, call
// conformance-noop, a tool error, an approval round answered by the
// client's elicitation handler, and a task. The client has no runtime for
// the Tasks extension: its callTool refuses a CreateTaskResult
// (resultType "task") as an unsupported result type. So the tools/call that
// starts the task is a plain fetch carrying what the SDK itself sends;
// tasks/get and tasks/update then go through the SDK's generic request(),
// which sends the _meta envelope and Mcp-Name: <taskId> for them.
//
// Tenant A owns the task; tenant B must not be able to tell it from a
// task that never existed. One line per step goes to stdout ("ok <step>:
// ..."); the first mismatch prints "FAIL ..." and exits 1.

import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [baseURL, keyA, keyB] = process.argv.slice(2);
if (!baseURL || !keyA || !keyB) {
  console.error('usage: node mcp-peer.mjs <baseURL> <keyOfTenantA> <keyOfTenantB>');
  process.exit(2);
}

const REVISION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const endpoint = new URL('/mcp', baseURL);

class Mismatch extends Error {}

function check(cond, what) {
  if (!cond) throw new Mismatch(what);
}

const step = (name, detail) => console.log(`ok ${name}: ${detail}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Every request put on the wire, with the headers a 2026-07-28 server
// checks against the body.
const sent = [];
const recordingFetch = (input, init) => {
  const h = new Headers(init?.headers);
  let body = {};
  try {
    body = JSON.parse(init?.body ?? '{}');
  } catch {}
  sent.push({
    method: body.method,
    version: h.get('mcp-protocol-version'),
    header: h.get('mcp-method'),
    name: h.get('mcp-name'),
    metaVersion: body.params?._meta?.['io.modelcontextprotocol/protocolVersion'],
  });
  return fetch(input, init);
};

// A Standard Schema that accepts any value: request() needs a result
// schema for methods outside the spec registry; the peer checks the
// fields itself.
const anyResult = { '~standard': { version: 1, vendor: 'wopinterop-mcp-peer', validate: (value) => ({ value }) } };

async function connect(key, capabilities, onElicit) {
  const client = new Client(
    { name: 'wopinterop-mcp-peer', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: 'auto' } },
  );
  if (onElicit) client.setRequestHandler('elicitation/create', onElicit);
  const transport = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    fetch: recordingFetch,
  });
  await client.connect(transport);
  return client;
}

const textOf = (result, i = 0) => (result.content?.[i]?.type === 'text' ? result.content[i].text : undefined);

async function main() {
  // Step: connect. auto negotiation probes server/discover; the server's
  // answer is definitive modern evidence, so no initialize is ever sent.
  const asked = [];
  const a = await connect(keyA, { elicitation: { form: {} } }, async (request) => {
    asked.push(request.params);
    return { action: 'accept', content: { action: 'accept' } };
  });
  const discover = a.getDiscoverResult();
  const server = a.getServerVersion();
  check(a.getNegotiatedProtocolVersion() === REVISION && a.getProtocolEra() === 'modern', `connect: negotiated ${a.getNegotiatedProtocolVersion()} (${a.getProtocolEra()})`);
  check(JSON.stringify(discover?.supportedVersions) === JSON.stringify([REVISION]), `connect: supportedVersions ${JSON.stringify(discover?.supportedVersions)}`);
  check(discover?.capabilities?.extensions?.[TASKS] !== undefined && discover?.capabilities?.tools !== undefined, `connect: capabilities ${JSON.stringify(discover?.capabilities)}`);
  check(server?.name === 'wopinterop example host' && typeof server?.version === 'string', `connect: server ${JSON.stringify(server)}`);
  check(sent.length === 1 && sent[0].method === 'server/discover', `connect sent ${sent.map((s) => s.method)}`);
  step('connect', `${REVISION} (${a.getProtocolEra()}), ${server.name}/${server.version}, extensions ${Object.keys(discover.capabilities.extensions)}`);

  // Step: list tools. The caller's workflows sorted by name, private.
  const list = await a.listTools();
  const names = list.tools.map((t) => t.name);
  // Every fixture the host advertises is a tool, and the list is sorted.
  const { fixtures } = await (await fetch(new URL('/.well-known/openwop', baseURL))).json();
  check(fixtures.length > 0 && fixtures.every((f) => names.includes(f)) && JSON.stringify(names) === JSON.stringify([...names].sort()), `list: ${names}; fixtures ${fixtures}`);
  check(list.cacheScope === 'private' && list.ttlMs === 60000 && list.nextCursor === undefined, `list: cacheScope ${list.cacheScope} ttlMs ${list.ttlMs} nextCursor ${list.nextCursor}`);
  step('list', `${names.length} tools ${names.join(',')}; cacheScope ${list.cacheScope}, ttlMs ${list.ttlMs}`);

  // Step: call conformance-noop.
  const noop = await a.callTool({ name: 'conformance-noop', arguments: { message: 'hi' } });
  check(noop.isError === false && textOf(noop) === '{"ok":true}', `call: ${JSON.stringify(noop)}`);
  check(JSON.stringify(noop.structuredContent) === '{"ok":true}', `call: structuredContent ${JSON.stringify(noop.structuredContent)}`);
  const artifact = noop.content[1];
  check(noop.content.length === 2 && artifact.type === 'resource' && artifact.resource.uri.startsWith('openwop://runs/') && artifact.resource.text === 'conformance-noop completed', `call: artifact ${JSON.stringify(artifact)}`);
  step('call', `conformance-noop ${textOf(noop)} + ${artifact.resource.uri}`);

  // Step: a failed run is a tool error, not a protocol error.
  const failure = await a.callTool({ name: 'conformance-failure', arguments: {} });
  check(failure.isError === true && textOf(failure) === 'conformance failure fixture failed on purpose', `tool error: ${JSON.stringify(failure)}`);
  step('tool error', `conformance-failure isError, "${textOf(failure)}"`);

  // Step: approval. input_required → the elicitation handler → the retry
  // with the sealed requestState → completed.
  const approval = await a.callTool({ name: 'conformance-approval', arguments: {} });
  check(approval.isError === false && textOf(approval) === '{"approved":true}', `approval: ${JSON.stringify(approval)}`);
  check(asked.length === 1 && asked[0].mode === 'form' && asked[0].message === 'Approve the request?' && asked[0].requestedSchema?.required?.[0] === 'action', `approval: elicitations ${JSON.stringify(asked)}`);
  const retry = sent.filter((s) => s.method === 'tools/call' && s.name === 'conformance-approval');
  check(retry.length === 2, `approval: ${retry.length} tools/call requests, want the first round and one retry`);
  step('approval', `${asked.length} elicitation (${asked[0].mode}) → ${textOf(approval)} in ${retry.length} requests`);

  // Step: task. A client declaring the Tasks extension.
  const taskCaps = { elicitation: { form: {} }, extensions: { [TASKS]: {} } };
  const ta = await connect(keyA, taskCaps);
  const started = await rawCall(keyA, taskCaps, 'conformance-approval', {});
  const taskId = started.result?.taskId;
  check(started.result?.resultType === 'task' && typeof taskId === 'string' && ['working', 'input_required'].includes(started.result.status), `task: tools/call answered ${JSON.stringify(started)}`);
  step('task', `${taskId} ${started.result.status}`);

  const get = (client) => client.request({ method: 'tasks/get', params: { taskId } }, anyResult);
  const until = async (status) => {
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline) {
      const task = await get(ta);
      check(task.taskId === taskId, `tasks/get: ${JSON.stringify(task)}`);
      if (task.status === status) return task;
      await sleep(20);
    }
    throw new Mismatch(`task ${taskId} never reached ${status}`);
  };
  const waiting = await until('input_required');
  const keys = Object.keys(waiting.inputRequests ?? {});
  const input = waiting.inputRequests?.[keys[0]];
  check(keys.length === 1 && waiting.requestState === undefined && input.method === 'elicitation/create' && input.params?.mode === 'form', `task input: ${JSON.stringify(waiting)}`);
  step('task input', `input_required, 1 ${input.method} (${input.params.mode}) "${input.params.message}"`);

  const ack = await ta.request({ method: 'tasks/update', params: { taskId, inputResponses: { [keys[0]]: { action: 'accept', content: { action: 'accept' } } } } }, anyResult);
  check(ack.taskId === undefined && Object.keys(ack).every((k) => k === '_meta'), `task update: ${JSON.stringify(ack)}`);
  step('task update', 'accepted, empty acknowledgement');

  const done = await until('completed');
  check(done.result?.isError === false && JSON.stringify(done.result?.structuredContent) === '{"approved":true}', `task done: ${JSON.stringify(done)}`);
  step('task done', `completed, result ${JSON.stringify(done.result.structuredContent)}`);

  // Step: isolation. Tenant B cannot tell A's task from a missing one.
  const b = await connect(keyB, taskCaps);
  const refusal = async (id) => {
    try {
      const got = await b.request({ method: 'tasks/get', params: { taskId: id } }, anyResult);
      throw new Mismatch(`tenant B read task ${id}: ${JSON.stringify(got)}`);
    } catch (err) {
      if (err instanceof Mismatch) throw err;
      check(err instanceof ProtocolError, `tenant B: ${err}`);
      return `${err.code} ${err.message}`;
    }
  };
  const foreign = await refusal(taskId);
  const unknown = await refusal(`${taskId.slice(0, taskId.indexOf('~2F') + 3)}${'A'.repeat(26)}`); // A's tenant, no such run
  check(foreign.startsWith('-32602 ') && foreign === unknown, `isolation: foreign "${foreign}", unknown "${unknown}"`);
  step('isolation', `tenant B: "${foreign}" for A's task and for an unknown one`);

  // Step: wire. Every request carried the revision as header and in _meta,
  // Mcp-Method equal to the body's method, Mcp-Name on tools/call and
  // tasks/*; nothing of the initialize era.
  for (const s of sent) {
    check(s.version === REVISION && s.metaVersion === REVISION && s.header === s.method, `wire: ${JSON.stringify(s)}`);
    check(!['tools/call', 'tasks/get', 'tasks/update'].includes(s.method) || s.name, `wire: no Mcp-Name on ${JSON.stringify(s)}`);
    check(s.method !== 'initialize', 'wire: initialize was sent');
  }
  step('wire', `${sent.length} requests, each MCP-Protocol-Version ${REVISION} with matching Mcp-Method/Mcp-Name`);

  await Promise.all([a.close(), ta.close(), b.close()]);
  console.log('PASS');
}

// rawCall POSTs one tools/call exactly as the SDK would, for the answer
// the SDK cannot consume (CreateTaskResult).
async function rawCall(key, capabilities, name, args) {
  const body = {
    jsonrpc: '2.0',
    id: `task-${crypto.randomUUID()}`,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': REVISION,
        'io.modelcontextprotocol/clientInfo': { name: 'wopinterop-mcp-peer', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': capabilities,
      },
    },
  };
  const res = await recordingFetch(endpoint, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': REVISION,
      'Mcp-Method': 'tools/call',
      'Mcp-Name': name,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  check(res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('application/json'), `raw tools/call: ${res.status} ${text}`);
  const msg = JSON.parse(text);
  check(msg.id === body.id, `raw tools/call: id ${msg.id}`);
  return msg;
}

main().catch((err) => {
  console.log(`FAIL ${err instanceof Mismatch ? '' : `${err?.name}: `}${err?.message}`);
  if (!(err instanceof Mismatch) && err?.stack) console.error(err.stack);
  process.exit(1);
});
