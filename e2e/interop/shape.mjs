#!/usr/bin/env node
// What the official TypeScript SDK client gets of a server whose lists hold entries the MCP
// schema refuses and whose answers are malformed (the project's test server with -malformed,
// see e2e/testserver/malformed.go), directly and through the aggregator.
//
// Directly (--direct TESTSERVER): each of listTools, listPrompts, listResources and
// listResourceTemplates throws for the whole list (printed as "# direct ..." notes). Through
// the aggregator (the command after `--`, with that server as "bad" beside a well-formed one
// as "good"): every list succeeds and holds every good entry of both servers, none of the bad
// ones; every call of bad's tool shapeless (kinds errcode, nocode, null, array, deep) fails at
// once with -32603 naming the server, where directly the SDK drops the answer and waits for its
// timeout. Each check prints "ok NAME" or "not ok NAME: reason"; the last line is
// "N passed, M failed"; exit code 1 if M > 0.
//
// Usage: node shape.mjs --sep SEP --direct TESTSERVER -- AGGREGATOR [ARGS...]

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parseArgs, usageOf } from "./lib.mjs";

const usage = usageOf(import.meta.url);
const { values, rest } = parseArgs(process.argv.slice(2), { "--sep": "sep", "--direct": "direct" }, usage);
if (!rest || !values.sep || !values.direct) usage("--sep, --direct and a command after -- are required");
const sep = values.sep;
const TIMEOUT = 5000; // each call's; an answer the SDK drops would take all of it

let passed = 0, failed = 0;
const oneLine = (s) => String(s).replace(/\s+/g, " ").slice(0, 300);
function check(name, ok, why) {
  if (ok) { passed++; console.log(`ok ${name}`); } else { failed++; console.log(`not ok ${name}: ${oneLine(why)}`); }
}

async function connect(command, args) {
  const client = new Client({ name: "shape-check", version: "1" }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  return client;
}

const lists = [
  ["tools", (c) => c.listTools({}, { timeout: TIMEOUT }), "tools"],
  ["prompts", (c) => c.listPrompts({}, { timeout: TIMEOUT }), "prompts"],
  ["resources", (c) => c.listResources({}, { timeout: TIMEOUT }), "resources"],
  ["templates", (c) => c.listResourceTemplates({}, { timeout: TIMEOUT }), "resourceTemplates"],
];

// Directly: each list fails whole.
const direct = await connect(values.direct, ["-name", "bad", "-malformed", "-caps", "prompts,resources"]);
for (const [name, list] of lists) {
  try { await list(direct); console.log(`# direct ${name}: listed (the SDK accepted it)`); }
  catch (e) { console.log(`# direct ${name}: the whole list failed: ${oneLine(e.message)}`); }
}
await direct.close();

const agg = await connect(rest[0], rest.slice(1));
const want = {
  tools: { has: ["bad" + sep + "echo", "good" + sep + "echo", "bad" + sep + "shapeless"], not: ["stringschema", "annotated", "numdesc", "github"] },
  prompts: { has: ["bad" + sep + "greet", "good" + sep + "greet"], not: ["badargs"] },
  resources: { has: ["test://bad/r0", "test://good/r0"], not: ["noname"] },
  templates: { has: ["test://bad/", "test://good/"], not: ["noname"] },
};
for (const [name, list, field] of lists) {
  try {
    const got = JSON.stringify((await list(agg))[field]);
    const missing = want[name].has.filter((s) => !got.includes(s));
    const extra = want[name].not.filter((s) => got.includes(s));
    check(`list-${name}`, !missing.length && !extra.length, `missing ${missing}, extra ${extra}: ${got}`);
  } catch (e) {
    check(`list-${name}`, false, `the list failed: ${e.message}`);
  }
}
for (const kind of ["errcode", "nocode", "null", "array", "deep"]) {
  const began = Date.now();
  try {
    await agg.callTool({ name: "bad" + sep + "shapeless", arguments: { kind } }, undefined, { timeout: TIMEOUT });
    check(`call-${kind}`, false, "the call succeeded");
  } catch (e) {
    const ms = Date.now() - began;
    check(`call-${kind}`, e.code === -32603 && String(e.message).includes('server "bad"') && ms < TIMEOUT / 2,
      `after ${ms} ms: code ${e.code}: ${e.message}`);
  }
}
await agg.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
