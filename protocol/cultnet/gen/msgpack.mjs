// Re-encodes MessagePack with @msgpack/msgpack, an encoder independent of the crate and of
// msgpack-python, and compares the bytes.
//
// Input: the npm package @msgpack/msgpack at exactly PINNED_VERSION, installed beside this script
// (npm install --prefix <this folder>).
//
//   node msgpack.mjs            every wire vector of vectors/write-receipt-vectors.json: its
//                               decoded message, encoded here, must be its hex byte for byte.
//   node msgpack.mjs --stdin    a JSON array of cases from stdin, each {value, hex} (the encoding
//                               of value must be hex) or {value, sha256} (the SHA-256 of the
//                               encoding of value must be sha256).
//
// Values in --stdin cases are JSON, with two tagged objects: {"$bin": "<hex>"} is a byte string
// (a MessagePack bin) and {"$packed": "<hex>"} is a MessagePack value given by its encoding,
// decoded here (64-bit integers as BigInt, so none loses precision). Map keys keep their order;
// every key here is a name, never an integer-like string (which a JavaScript object would move
// to the front).
//
// Prints "checked N bad M" and exits 1 when M > 0, 2 when the input or the package is wrong.

import { createRequire } from "node:module";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PINNED_VERSION = "3.1.3";
const PACKAGE = "@msgpack/msgpack";

const require = createRequire(import.meta.url);
const installed = JSON.parse(readFileSync(require.resolve(`${PACKAGE}/package.json`), "utf8"))
  .version;
if (installed !== PINNED_VERSION) {
  console.error(`${PACKAGE} is ${installed}, the check is pinned to ${PINNED_VERSION}`);
  process.exit(2);
}
const { encode, decode } = await import(PACKAGE);

const ENCODE = { useBigInt64: true };
const DECODE = { useBigInt64: true };

const toHex = (bytes) => Buffer.from(bytes).toString("hex");
const fromHex = (hex) => new Uint8Array(Buffer.from(hex, "hex"));

function untag(v) {
  if (Array.isArray(v)) return v.map(untag);
  if (v !== null && typeof v === "object") {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === "$bin") return fromHex(v.$bin);
    if (keys.length === 1 && keys[0] === "$packed") return decode(fromHex(v.$packed), DECODE);
    const out = {};
    for (const k of keys) out[k] = untag(v[k]);
    return out;
  }
  return v;
}

let checked = 0;
let bad = 0;

function compare(name, ours, theirs) {
  checked += 1;
  if (ours !== theirs) {
    bad += 1;
    console.log(`${name}: expected ${ours.slice(0, 200)} @msgpack/msgpack ${theirs.slice(0, 200)}`);
  }
}

if (process.argv.includes("--stdin")) {
  const cases = JSON.parse(readFileSync(0, "utf8"));
  cases.forEach((c, i) => {
    const bytes = encode(untag(c.value), ENCODE);
    if (typeof c.hex === "string") compare(`case ${i}`, c.hex, toHex(bytes));
    else if (typeof c.sha256 === "string")
      compare(`hash ${i}`, c.sha256, createHash("sha256").update(bytes).digest("hex"));
    else {
      console.error(`case ${i} has neither hex nor sha256`);
      process.exit(2);
    }
  });
} else {
  const here = dirname(fileURLToPath(import.meta.url));
  const file = join(here, "..", "..", "..", "vectors", "write-receipt-vectors.json");
  const vectors = JSON.parse(readFileSync(file, "utf8"));
  if (!Array.isArray(vectors.wire) || vectors.wire.length === 0) {
    console.error("the vectors file has no wire section");
    process.exit(2);
  }
  for (const v of vectors.wire) compare(v.name, v.hex, toHex(encode(v.message, ENCODE)));
}

console.log(`checked ${checked} bad ${bad}`);
process.exit(bad === 0 ? 0 : 1);
