// The Node card-signature peer: @a2a-js/sdk's own signing helpers
// (generateAgentCardSignature, verifyAgentCardSignature; A2A 1.0 §8.4)
// against the cards a wopinterop host signs, both ways.
//
//   node testpeers/card-signature-peer.mjs <baseURL> <bearerKey> <trustedJWK>
//
// trustedJWK is the host's public key as a JWK with its kid. The peer
//   1. verifies every card the host serves — the public card with and
//      without A2A-Version, the extended card over HTTP+JSON and
//      JSON-RPC, and an agent's card — with the SDK's verifier, and checks
//      that a tampered copy is refused;
//   2. signs cards with the SDK's signer, for the Go side to verify: the
//      host's public card and a card of edge cases, with an EdDSA and an
//      ES256 key, and a card with a member outside the A2A schema (which
//      the SDK leaves out of what it signs). Each is printed as one line
//      "signed <json>" with {name, jwk, card}.
// One line per step goes to stdout ("ok ..."); the first mismatch prints
// "FAIL ..." and exits 1.

import * as jose from 'jose';
import { generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk';

const [baseURL, key, jwkText] = process.argv.slice(2);
if (!baseURL || !key || !jwkText) {
  console.error('usage: node card-signature-peer.mjs <baseURL> <bearerKey> <trustedJWK>');
  process.exit(2);
}
const trusted = JSON.parse(jwkText);

// The SDK's verifier logs each failed entry with console.debug; the
// refusals below are expected, and stdout is the Go test's to read.
console.debug = () => {};

class Mismatch extends Error {}

function check(cond, what) {
  if (!cond) throw new Mismatch(what);
}

// The SDK's verifier, trusting exactly the host's key.
const verify = verifyAgentCardSignature(async (kid) => {
  if (kid !== trusted.kid) throw new Error(`unknown kid ${kid}`);
  return jose.importJWK(trusted, trusted.alg);
});

async function getJSON(path, headers = {}) {
  const res = await fetch(baseURL + path, { headers });
  check(res.ok, `GET ${path}: HTTP ${res.status}`);
  return res.json();
}

async function refused(card) {
  try {
    await verify(card);
  } catch {
    return true;
  }
  return false;
}

// verifyServed verifies a card as served, then a copy with its name
// changed, which must be refused.
async function verifyServed(what, card) {
  check(Array.isArray(card.signatures) && card.signatures.length === 1, `${what}: one signature, got ${JSON.stringify(card.signatures)}`);
  await verify(card);
  check(await refused({ ...card, name: card.name + '!' }), `${what}: a tampered copy verified`);
  console.log(`ok verify ${what}`);
}

const auth = { Authorization: `Bearer ${key}`, 'A2A-Version': '1.0' };

async function main() {
  const publicCard = await getJSON('/.well-known/agent-card.json');
  await verifyServed('public card', publicCard);
  await verifyServed('public card (A2A-Version 1.0)', await getJSON('/.well-known/agent-card.json', { 'A2A-Version': '1.0' }));
  await verifyServed('extended card (HTTP+JSON)', await getJSON('/a2a/rest/extendedAgentCard', auth));

  const rpc = await fetch(baseURL + '/a2a', {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard', params: {} }),
  });
  const rpcBody = await rpc.json();
  check(rpcBody.result, `GetExtendedAgentCard: ${JSON.stringify(rpcBody)}`);
  await verifyServed('extended card (JSON-RPC)', rpcBody.result);

  const agents = await getJSON('/agents', { Authorization: `Bearer ${key}` });
  const tenant = agents.agents.find((a) => a.a2aTenant)?.a2aTenant;
  check(tenant, 'no agent with an a2aTenant');
  await verifyServed('agent card', await getJSON(`/a2a/rest/${tenant}/extendedAgentCard`, auth));

  // Cards the SDK signs, for the Go side. The edge cases exercise the
  // default omission both sides must agree on (A2A 1.0 §8.4.1): empty
  // strings, arrays and objects anywhere, false in AgentExtension.required,
  // false kept in an optional boolean, numbers in extension params.
  const { signatures: _, ...unsigned } = publicCard;
  const edge = {
    name: 'Edge agent',
    description: '',
    version: '1.0.0',
    supportedInterfaces: [{ url: 'https://edge.example/a2a', protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    capabilities: {
      streaming: false,
      extensions: [{ uri: 'urn:x-edge', description: '', required: false, params: { n: 1.5, big: 1e21, s: 'é\u2028<>&', empty: '', list: [], obj: {} } }],
    },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', ''],
    skills: [{ id: 's', name: 'S', description: 'd', tags: [], examples: ['', 'x'] }],
  };
  const cases = [
    ['public-eddsa', 'EdDSA', unsigned],
    ['public-es256', 'ES256', unsigned],
    ['edge-eddsa', 'EdDSA', edge],
    ['edge-es256', 'ES256', edge],
    ['unknown-member-eddsa', 'EdDSA', { ...edge, 'x-vendor': 'not in the A2A schema' }],
  ];
  for (const [name, alg, card] of cases) {
    const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
    const jwk = { ...(await jose.exportJWK(publicKey)), kid: `js-${name}`, alg };
    const sign = generateAgentCardSignature(privateKey, { alg, kid: jwk.kid, typ: 'JOSE' });
    const signed = await sign(card);
    console.log(`signed ${JSON.stringify({ name, jwk, card: signed })}`);
  }
  console.log('ok signed');
  console.log('PASS');
}

main().catch((err) => {
  console.log(`FAIL ${err instanceof Mismatch ? err.message : err.stack}`);
  process.exit(1);
});
