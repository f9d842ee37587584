// The Node A2A peer: @a2a-js/sdk's own client drives a wopinterop host
// through the scenario the Go peer runs (examples/host/peers_go_test.go),
// once over JSON-RPC and once over HTTP+JSON.
//
//   node testpeers/a2a-peer.mjs <baseURL> <keyOfTenantA> <keyOfTenantB>
//
// Tenant A is the one whose id prefix the tasks carry (the first segment
// of every task id); tenant B must see none of them. One line per step
// goes to stdout ("ok <binding> <step>: ..."); the first mismatch prints
// "FAIL ..." and exits 1.

import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
} from '@a2a-js/sdk';
import {
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';

const [baseURL, keyA, keyB] = process.argv.slice(2);
if (!baseURL || !keyA || !keyB) {
  console.error('usage: node a2a-peer.mjs <baseURL> <keyOfTenantA> <keyOfTenantB>');
  process.exit(2);
}

const SKILL = 'conformance-approval';

class Mismatch extends Error {}

function check(cond, what) {
  if (!cond) throw new Mismatch(what);
}

// Every request the peer sends, for the check that each call used the
// interface of the binding under test.
const sent = [];
const recordingFetch = (input, init) => {
  sent.push({ method: init?.method ?? 'GET', url: String(input), version: headerOf(init, 'A2A-Version'), body: init?.body });
  return fetch(input, init);
};

function headerOf(init, name) {
  const h = init?.headers ?? {};
  if (h instanceof Headers) return h.get(name);
  const key = Object.keys(h).find((k) => k.toLowerCase() === name.toLowerCase());
  return key ? h[key] : null;
}

// bearer is the peer's auth interceptor: it puts the tenant's key on every
// call, as the card's bearer security scheme says.
function bearer(key) {
  return {
    async before(args) {
      args.options.serviceParameters = { ...args.options.serviceParameters, Authorization: `Bearer ${key}` };
    },
    async after() {},
  };
}

const wire = (task) => Task.toJSON(task);
const stateOf = (task) => wire(task).status?.state;

function approve() {
  return SendMessageRequest.fromJSON({
    message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'please approve' }] },
  });
}

// accept answers the approval by taskId alone (no contextId), with the
// action both as metadata.openwop.interrupt and as a data part.
function accept(taskId) {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: crypto.randomUUID(),
      taskId,
      role: 'ROLE_USER',
      parts: [{ data: { action: 'accept' } }],
      metadata: { openwop: { interrupt: { action: 'accept' } } },
    },
  });
}

async function expectError(promise, cls, what) {
  try {
    await promise;
  } catch (err) {
    check(err instanceof cls, `${what}: ${err?.name}: ${err?.message}, want ${cls.name}`);
    return err;
  }
  throw new Mismatch(`${what}: succeeded, want ${cls.name}`);
}

async function waitState(client, id, state) {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const task = await client.getTask(GetTaskRequest.fromJSON({ id }));
    if (stateOf(task) === state) return task;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Mismatch(`task ${id} never reached ${state}`);
}

function kind(ev) {
  const j = StreamResponse.toJSON(ev);
  if (j.task) return `task:${j.task.status?.state}`;
  if (j.statusUpdate) return `statusUpdate:${j.statusUpdate.status?.state}`;
  if (j.artifactUpdate) return 'artifactUpdate';
  if (j.message) return 'message';
  return '?';
}

async function scenario(card, binding, Factory, step) {
  const clientFor = (key) =>
    new ClientFactory({
      transports: [new Factory({ fetchImpl: recordingFetch })],
      clientConfig: { interceptors: [bearer(key)] },
    }).createFromAgentCard(card);
  const a = await clientFor(keyA);
  const other = await clientFor(keyA);
  const b = await clientFor(keyB);
  check(a.transport.protocolName === binding, `client chose ${a.transport.protocolName}, want ${binding}`);
  const first = sent.length;

  // send: the approval run waits for an answer, at the bound task id.
  const task = await a.sendMessage(approve());
  const t = wire(task);
  const tenantA = String(t.id).split('/')[0];
  check(String(t.id).includes('/') && tenantA !== '', `send: task id ${t.id} is not tenant/opaque`);
  check(t.contextId, 'send: no contextId');
  check(t.status?.state === 'TASK_STATE_INPUT_REQUIRED', `send: state ${t.status?.state}`);
  check(t.metadata?.openwop?.interrupt?.kind === 'approval', `send: metadata ${JSON.stringify(t.metadata)}`);
  step('send', `${t.id} ${t.status.state}`);

  // multi-turn: the accept reply by taskId completes it in the same context.
  const done = wire(await a.sendMessage(accept(t.id)));
  check(done.id === t.id && done.contextId === t.contextId, `multi-turn: answered ${done.id} ${done.contextId}`);
  check(done.status?.state === 'TASK_STATE_COMPLETED', `multi-turn: state ${done.status?.state}`);
  step('multi-turn', done.status.state);

  // get: both exchanged messages are the history; a tenant that is no
  // routing value of A's is a hint the host ignores.
  const got = wire(await a.getTask(GetTaskRequest.fromJSON({ id: t.id })));
  check(got.status?.state === 'TASK_STATE_COMPLETED' && got.history?.length === 2, `get: ${JSON.stringify(got)}`);
  const one = wire(await a.getTask(GetTaskRequest.fromJSON({ id: t.id, historyLength: 1 })));
  check(one.history?.length === 1, `get historyLength 1: ${one.history?.length} messages`);
  const hinted = wire(await a.getTask(GetTaskRequest.fromJSON({ id: t.id, tenant: 'not-a-routing-value' })));
  check(JSON.stringify(hinted) === JSON.stringify(got), `get with a foreign tenant: ${JSON.stringify(hinted)}`);
  step('get', `${got.status.state}, ${got.history.length} history messages`);

  // list: A's task is listed, with and without a status filter. Without
  // one the request is a plain object, as an application writes it: over
  // JSON-RPC the SDK then sends "status":"UNRECOGNIZED", which filters
  // nothing. B sees nothing of A's, also naming A's context or A's tenant,
  // and that is an answer, not an error.
  const mark = sent.length;
  const list = await a.listTasks({ contextId: t.contextId });
  check(list.tasks.length === 1 && list.tasks[0].id === t.id && list.totalSize === 1, `list: ${JSON.stringify(list)}`);
  if (binding === 'JSONRPC') {
    const params = JSON.parse(sent[mark].body).params;
    check(params.status === 'UNRECOGNIZED', `list: the SDK sent status ${JSON.stringify(params.status)}, want UNRECOGNIZED`);
  }
  const completed = await a.listTasks(ListTasksRequest.fromJSON({ contextId: t.contextId, status: 'TASK_STATE_COMPLETED' }));
  check(completed.tasks.length === 1 && completed.tasks[0].id === t.id, `list COMPLETED: ${JSON.stringify(completed)}`);
  const waiting = await a.listTasks(ListTasksRequest.fromJSON({ contextId: t.contextId, status: 'TASK_STATE_INPUT_REQUIRED' }));
  check(waiting.tasks.length === 0 && waiting.totalSize === 0, `list INPUT_REQUIRED: ${JSON.stringify(waiting)}`);
  for (const q of [{}, { contextId: t.contextId }, { tenant: tenantA, contextId: t.contextId }]) {
    const res = await b.listTasks(ListTasksRequest.fromJSON(q));
    check(res.tasks.length === 0 && res.totalSize === 0, `list as B ${JSON.stringify(q)}: ${res.tasks.length} tasks`);
  }
  await expectError(b.getTask(GetTaskRequest.fromJSON({ id: t.id })), TaskNotFoundError, 'get as B');
  await expectError(b.cancelTask(CancelTaskRequest.fromJSON({ id: t.id })), TaskNotFoundError, 'cancel as B');
  await expectError(b.sendMessage(accept(t.id)), TaskNotFoundError, 'message as B');
  step('list', 'A 1 task, B none');

  // cancel: a waiting approval cancels; then it is not cancelable and
  // takes no more messages.
  const victim = wire(await a.sendMessage(approve()));
  const canceled = wire(await a.cancelTask(CancelTaskRequest.fromJSON({ id: victim.id })));
  check(
    canceled.status?.state === 'TASK_STATE_CANCELED' || canceled.status?.state === 'TASK_STATE_WORKING',
    `cancel: state ${canceled.status?.state}`,
  );
  await waitState(a, victim.id, 'TASK_STATE_CANCELED');
  await expectError(a.cancelTask(CancelTaskRequest.fromJSON({ id: victim.id })), TaskNotCancelableError, 'cancel again');
  await expectError(a.sendMessage(accept(victim.id)), UnsupportedOperationError, 'message to a canceled task');
  step('cancel', canceled.status.state);

  // stream: the task first, then status updates, ending at the interrupt.
  const streamed = [];
  for await (const ev of a.sendMessageStream(approve())) streamed.push(ev);
  const kinds = streamed.map(kind);
  const firstEv = StreamResponse.toJSON(streamed[0] ?? {});
  const lastEv = StreamResponse.toJSON(streamed.at(-1) ?? {});
  check(firstEv.task && streamed.length >= 2, `stream: ${kinds.join(' ')}`);
  check(
    lastEv.statusUpdate?.status?.state === 'TASK_STATE_INPUT_REQUIRED' && lastEv.statusUpdate.taskId === firstEv.task.id,
    `stream: ${kinds.join(' ')}`,
  );
  step('stream', kinds.join(' '));

  // subscribe: a subscription to the waiting task stays open until another
  // client resolves it, then ends at COMPLETED.
  const id = firstEv.task.id;
  const events = a.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id }));
  const head = await events.next();
  check(!head.done, 'subscribe: ended before any event');
  const subscribed = [head.value];
  const headJSON = StreamResponse.toJSON(head.value);
  check(headJSON.task?.id === id && headJSON.task.status?.state === 'TASK_STATE_INPUT_REQUIRED', `subscribe: first ${kind(head.value)}`);
  const resolved = wire(await other.sendMessage(accept(id)));
  check(resolved.status?.state === 'TASK_STATE_COMPLETED', `subscribe: resolving answered ${resolved.status?.state}`);
  for await (const ev of events) subscribed.push(ev);
  const end = StreamResponse.toJSON(subscribed.at(-1));
  check(end.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED', `subscribe: ${subscribed.map(kind).join(' ')}`);
  step('subscribe', subscribed.map(kind).join(' '));

  // Every call of this binding went to its interface at A2A-Version 1.0.
  const iface = card.supportedInterfaces.find((i) => i.protocolBinding === binding)?.url;
  for (const r of sent.slice(first)) {
    check(r.url.startsWith(iface) && r.version === '1.0', `a call went to ${r.method} ${r.url} (A2A-Version ${r.version})`);
  }
  step('wire', `${sent.length - first} calls to ${iface}`);

  await outputStep(a, step);
}

async function main() {
  const card = await new DefaultAgentCardResolver({ fetchImpl: recordingFetch }).resolve(baseURL);
  const skills = (card.skills ?? []).map((s) => s.id);
  check(skills.length === 1 && skills[0] === SKILL, `card: skills ${JSON.stringify(skills)}`);
  check(card.capabilities?.streaming === true, 'card: streaming not offered');
  const bindings = card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`);
  check(bindings.includes('JSONRPC 1.0') && bindings.includes('HTTP+JSON 1.0'), `card: interfaces ${bindings}`);
  console.log(`ok card: skills ${skills.join(',')}; interfaces ${bindings.join(', ')}`);

  for (const [binding, Factory] of [
    ['JSONRPC', JsonRpcTransportFactory],
    ['HTTP+JSON', RestTransportFactory],
  ]) {
    await scenario(card, binding, Factory, (name, detail) => console.log(`ok ${binding} ${name}: ${detail}`));
  }
  console.log('PASS');
}

main().catch((err) => {
  console.log(`FAIL ${err instanceof Mismatch ? '' : `${err?.name}: `}${err?.message}`);
  if (!(err instanceof Mismatch) && err?.stack) console.error(err.stack);
  process.exit(1);
});

// output: a completed run that published no artifact of its own shows its
// output as the artifact openwop.output, one data part holding it, in the
// SendMessage answer, GetTask, ListTasks with includeArtifacts and,
// streamed, just before the terminal statusUpdate. conformance-approval
// completes with {"approved":true} and publishes none.
async function outputStep(client, step) {
  const want = JSON.stringify({ approved: true });
  const wantOutput = (arts, where) => {
    check(
      arts?.length === 1 &&
        arts[0].artifactId === 'openwop.output' &&
        arts[0].parts?.length === 1 &&
        JSON.stringify(arts[0].parts[0].data) === want,
      `output ${where}: artifacts ${JSON.stringify(arts)}`,
    );
  };
  const t = wire(await client.sendMessage(approve()));
  wantOutput(wire(await client.sendMessage(accept(t.id))).artifacts, 'in the answer');
  wantOutput(wire(await client.getTask(GetTaskRequest.fromJSON({ id: t.id }))).artifacts, 'from GetTask');
  const list = await client.listTasks(ListTasksRequest.fromJSON({ contextId: t.contextId, includeArtifacts: true }));
  check(list.tasks.length === 1, `output from ListTasks: ${list.tasks.length} tasks`);
  wantOutput(wire(list.tasks[0]).artifacts, 'from ListTasks');

  const next = wire(await client.sendMessage(approve()));
  const streamed = [];
  for await (const ev of client.sendMessageStream(accept(next.id))) streamed.push(ev);
  const kinds = streamed.map(kind);
  check(kinds.slice(-2).join(' ') === 'artifactUpdate statusUpdate:TASK_STATE_COMPLETED', `output streamed: ${kinds.join(' ')}`);
  wantOutput([StreamResponse.toJSON(streamed.at(-2)).artifactUpdate.artifact], 'streamed');
  step('output', `openwop.output ${want} in the answer, GetTask, ListTasks and the stream`);
}
