// The Node peer of the work-unit envelope (workunit/a2a_node_test.go):
// @a2a-js/sdk's own client carries a sealed unit to a wopinterop host
// over JSON-RPC and HTTP+JSON and reads the result unit back.
//
//   node testpeers/workunit-peer.mjs <baseURL> <key> <unit base64> <sha256>
//
// The unit's canonical bytes come from the Go test, which sealed them;
// this peer never re-encodes them. Per binding it sends them
//   raw       as a raw application/json part with the digest in its
//             metadata, the extension activated (A2A-Extensions): the run
//             completes and its artifact carries the result unit, printed
//             for the Go test to verify;
//   tampered  the same with one byte changed: refused;
//   inactive  the same without activating the extension: refused;
//   text      the canonical text as a text part (for the measurement);
//   data      the parsed unit as a data part (for the measurement).
// One line per step goes to stdout ("ok <binding> <step>: ..."); the
// first mismatch prints "FAIL ..." and exits 1.

import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client';
import { SendMessageRequest, Task } from '@a2a-js/sdk';

const EXTENSION = 'https://github.com/wopinterop/wopinterop/workunit/v1';

const [baseURL, key, unitB64, digest] = process.argv.slice(2);
if (!baseURL || !key || !unitB64 || !digest) {
  console.error('usage: node workunit-peer.mjs <baseURL> <key> <unit base64> <sha256>');
  process.exit(2);
}

class Mismatch extends Error {}

function check(cond, what) {
  if (!cond) throw new Mismatch(what);
}

// The A2A-Extensions header of the latest request and response.
let lastSent = null;
let lastEcho = null;
const recordingFetch = async (input, init) => {
  const h = new Headers(init?.headers ?? {});
  lastSent = h.get('A2A-Extensions');
  const res = await fetch(input, init);
  lastEcho = res.headers.get('A2A-Extensions');
  return res;
};

function bearer() {
  return {
    async before(args) {
      args.options.serviceParameters = { ...args.options.serviceParameters, Authorization: `Bearer ${key}` };
    },
    async after() {},
  };
}

const activated = { serviceParameters: ServiceParameters.create(withA2AExtensions(EXTENSION)) };

function message(id, part) {
  return SendMessageRequest.fromJSON({
    message: {
      messageId: id,
      role: 'ROLE_USER',
      parts: [{ text: 'please review' }, part],
      extensions: [EXTENSION],
    },
  });
}

function unitPart(b64, sha256) {
  return { raw: b64, mediaType: 'application/json', metadata: { [EXTENSION]: { sha256 } } };
}

async function refused(promise, want, what) {
  try {
    const res = await promise;
    throw new Mismatch(`${what}: answered ${JSON.stringify(res)}, want a refusal`);
  } catch (err) {
    if (err instanceof Mismatch) throw err;
    check(String(err?.message).includes(want), `${what}: ${err?.name}: ${err?.message}, want ${want}`);
    return err;
  }
}

async function scenario(card, binding, Factory, step) {
  const client = await new ClientFactory({
    transports: [new Factory({ fetchImpl: recordingFetch })],
    clientConfig: { interceptors: [bearer()] },
  }).createFromAgentCard(card);
  check(client.transport.protocolName === binding, `client chose ${client.transport.protocolName}, want ${binding}`);

  // raw: the unit arrives, the run completes, the result unit comes back.
  const task = Task.toJSON(await client.sendMessage(message(`wu-raw-${binding}`, unitPart(unitB64, digest)), activated));
  check(task.status?.state === 'TASK_STATE_COMPLETED', `raw: state ${task.status?.state}`);
  check(lastSent === EXTENSION && lastEcho === EXTENSION, `raw: sent A2A-Extensions ${lastSent}, echoed ${lastEcho}`);
  const parts = task.artifacts?.[0]?.parts ?? [];
  check(parts.length === 1 && parts[0].raw && parts[0].mediaType === 'application/json', `raw: artifacts ${JSON.stringify(task.artifacts)}`);
  const resultDigest = parts[0].metadata?.[EXTENSION]?.sha256;
  step('raw', `${task.status.state} echo ${lastEcho} result ${parts[0].raw} ${resultDigest}`);

  // tampered: one byte of the canonical bytes changed.
  const bytes = Buffer.from(unitB64, 'base64');
  bytes[Math.floor(bytes.length / 2)] ^= 1;
  await refused(
    client.sendMessage(message(`wu-tampered-${binding}`, unitPart(bytes.toString('base64'), digest)), activated),
    'workunit: digest mismatch',
    'tampered',
  );
  step('tampered', 'refused');

  // inactive: the same unit without the extension activated.
  await refused(client.sendMessage(message(`wu-inactive-${binding}`, unitPart(unitB64, digest))), 'workunit: extension not activated', 'inactive');
  check(lastSent === null && lastEcho === null, `inactive: sent A2A-Extensions ${lastSent}, echoed ${lastEcho}`);
  step('inactive', 'refused');

  // text and data: the measurement the Go test reads off what the host
  // received. Neither is the envelope, so the host refuses both.
  const canonical = Buffer.from(unitB64, 'base64').toString('utf8');
  await refused(client.sendMessage(message(`wu-text-${binding}`, { text: canonical }), activated), 'workunit: no unit', 'text');
  step('text', 'sent');
  await refused(client.sendMessage(message(`wu-data-${binding}`, { data: JSON.parse(canonical) }), activated), 'workunit: no unit', 'data');
  step('data', 'sent');
}

async function main() {
  const card = await new DefaultAgentCardResolver({ fetchImpl: recordingFetch }).resolve(baseURL);
  const declared = (card.capabilities?.extensions ?? []).map((e) => e.uri);
  check(declared.includes(EXTENSION), `card: extensions ${JSON.stringify(declared)}`);
  console.log(`ok card: declares ${EXTENSION}`);
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
