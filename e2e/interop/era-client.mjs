#!/usr/bin/env node
// era-client.mjs: one protocol-era interop scenario, run by an official TypeScript SDK client
// (v2 @modelcontextprotocol/client, or v1 @modelcontextprotocol/sdk) against a stdio server
// spawned from the command after `--` (era-server.mjs directly, or the aggregator).
//
// Usage: node era-client.mjs --sdk v2|v1 --era modern|legacy|auto|default [--prefix P]
//        [--timeout MS] [--probe-in-place] [--scenario era|everything] -- COMMAND ARGS...
//   --sdk v2          @modelcontextprotocol/client 2.x; v1: @modelcontextprotocol/sdk 1.32 (legacy only).
//   --era modern      v2 versionNegotiation { pin: "2026-07-28" }: server/discover, no fallback.
//   --era legacy      v2 versionNegotiation "legacy": the initialize handshake, no probe.
//   --era auto        v2 versionNegotiation "auto": probe server/discover, fall back to initialize.
//   --era default     v2 without versionNegotiation (the SDK default, which is "legacy").
//                     With --sdk v1 only legacy/default make sense (v1 always initializes).
//   --prefix P        prepended to the tool names the scenario calls (e.g. "era:" behind the aggregator).
//   --timeout MS      bound of each step (default 10000).
//   --probe-in-place  v2 only: use a subclass of StdioClientTransport. The SDK runs the
//                     server/discover probe of auto/pinned modes on a disposable SIBLING process
//                     when the transport is exactly StdioClientTransport (so the server command
//                     is spawned twice); a subclass probes in place, on the session's own pipe.
//   --scenario S      era (the default): the scenario below, for era-server.mjs and
//                     legacy-server.mjs. everything: for the reference server-everything (legacy
//                     only, as e2e/gosdk's --scenario everything): list tools; call P+echo
//                     {message:"hi"}; call P+trigger-elicitation-request (1 elicitation expected,
//                     its text goes into "twoRound"); no list-change step.
//
// The server command gets this process's whole environment (the SDKs' default passes on only a few
// variables such as PATH and HOME), so that e.g. GORACE reaches an aggregator built with -race.
//
// Scenario: connect; record the protocol version, era, server info and capabilities as the SDK
// sees them; list tools; call P+echo {text:"hi"}; call P+two_round, answering the form
// elicitations with {name:"Ada"} then {color:"blue"} (counted: 2 expected); watch tools list
// changes (legacy: the notification handler; modern: client.listen({toolsListChanged:true}), a
// subscriptions/listen stream); call P+add_tool; wait (bounded, event-driven) for the list-changed
// notification; list tools again and check that P+added is there.
//
// Output: one JSON object on stdout, e.g. {"ok":true,"protocolVersion":"2026-07-28","era":
// "modern","tools":[...],"echo":"echo: hi","twoRound":"name=Ada color=blue","elicitations":2,
// "listChanged":true,"toolsAfter":[...],"errors":{}, ...}. A failed step is recorded under
// errors[step] and the scenario goes on where it can. Logs go to stderr. Exit code: 0 when every
// step passed, 1 when one failed (the JSON says which), 2 on bad usage.

import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { tapTransport } from "./lib.mjs";

const usage = (msg) => {
  const lines = fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1);
  const head = lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).map((l) => l.replace(/^\/\/ ?/, "")).join("\n");
  if (!msg) { console.log(head); process.exit(0); }
  console.error(`era-client.mjs: ${msg}\n\n${head}`);
  process.exit(2);
};

// ---- options
const opt = { sdk: "v2", era: "default", prefix: "", timeout: 10000, probeInPlace: false, scenario: "era" };
const argv = process.argv.slice(2);
let rest = null;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--") { rest = argv.slice(i + 1); break; }
  if (a === "-h" || a === "--help") usage();
  if (a === "--probe-in-place") { opt.probeInPlace = true; continue; }
  const key = { "--sdk": "sdk", "--era": "era", "--prefix": "prefix", "--timeout": "timeout", "--scenario": "scenario" }[a];
  if (!key) usage(`unknown argument ${a}`);
  if (i + 1 >= argv.length) usage(`missing value for ${a}`);
  opt[key] = argv[++i];
}
opt.timeout = Number(opt.timeout);
if (!rest || rest.length === 0) usage("no command given after --");
if (!["v1", "v2"].includes(opt.sdk)) usage(`--sdk must be v1 or v2, not ${opt.sdk}`);
if (!["modern", "legacy", "auto", "default"].includes(opt.era)) usage(`bad --era ${opt.era}`);
if (!Number.isFinite(opt.timeout) || opt.timeout <= 0) usage("bad --timeout");
if (!["era", "everything"].includes(opt.scenario)) usage(`bad --scenario ${opt.scenario}`);

const log = (...a) => console.error("[era-client]", ...a);
const P = opt.prefix;

// ---- the report
const out = {
  ok: false, sdk: opt.sdk, scenario: opt.scenario, requestedEra: opt.era, prefix: P,
  protocolVersion: null, era: null, serverInfo: null, capabilities: null,
  tools: null, echo: null, twoRound: null, elicitations: 0, elicitationMessages: [],
  listenHonoredFilter: null, listChanged: false, toolsAfter: null,
  // what went over the session's wire (not the v2 probe sibling's): outbound request and
  // notification methods in order, and the resultType of each inbound result that had one
  wire: { sent: [], resultTypes: [] },
  errors: {},
};

// withTimeout rejects when p has not settled within ms.
const withTimeout = (p, ms, what) => {
  let timer;
  return Promise.race([
    p,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
};

// step runs one step; a failure is recorded in out.errors[name] and returns undefined.
const step = async (name, fn) => {
  try {
    return await withTimeout(Promise.resolve().then(fn), opt.timeout, name);
  } catch (e) {
    const code = e?.code !== undefined ? ` [code ${e.code}]` : "";
    out.errors[name] = `${e?.message ?? e}${code}`;
    log(`step ${name} failed:`, out.errors[name]);
    return undefined;
  }
};

const textOf = (r) => (r?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

// tap records every message crossing the session transport (both ways) into out.wire.
const tap = (transport) => tapTransport(transport, {
  onSend: (msg) => { if (msg?.method) out.wire.sent.push(msg.method); },
  onReceive: (msg) => { if (msg?.result?.resultType) out.wire.resultTypes.push(msg.result.resultType); },
});

// The canned answers: fill in each requested field we know (name, color).
const CANNED = { name: "Ada", color: "blue" };
const answerElicitation = (params) => {
  out.elicitations++;
  out.elicitationMessages.push(params?.message ?? null);
  log(`elicitation #${out.elicitations}: ${params?.message}`);
  const content = {};
  for (const k of Object.keys(params?.requestedSchema?.properties ?? {})) if (k in CANNED) content[k] = CANNED[k];
  return { action: "accept", content };
};

// The tools list-changed waiter (event-driven, no polling). It is armed just before add_tool is
// called, so a notification from earlier (some servers send one at start-up) does not count.
let notifyListChanged = null;
const onToolsListChanged = () => {
  log(`tools list_changed received${notifyListChanged ? "" : " (before add_tool: ignored)"}`);
  notifyListChanged?.();
};

// ---- build the client for the chosen SDK
const clientInfo = { name: "era-client", version: "1.0.0" };
let client, transport, subscription;

if (opt.sdk === "v2") {
  const { Client } = await import("@modelcontextprotocol/client");
  const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
  const versionNegotiation = {
    modern: { mode: { pin: "2026-07-28" } },
    legacy: { mode: "legacy" },
    auto: { mode: "auto" },
    default: undefined,
  }[opt.era];
  client = new Client(clientInfo, {
    capabilities: { elicitation: { form: {} } },
    ...(versionNegotiation && { versionNegotiation }),
  });
  // The same handler answers pushed elicitation/create requests (legacy era) and the
  // embedded requests of input_required results, which callTool fulfils itself (modern era).
  client.setRequestHandler("elicitation/create", (req) => answerElicitation(req.params));
  client.setNotificationHandler("notifications/tools/list_changed", onToolsListChanged);
  const Transport = opt.probeInPlace ? class InPlaceStdio extends StdioClientTransport {} : StdioClientTransport;
  transport = new Transport({ command: rest[0], args: rest.slice(1), env: { ...process.env }, stderr: "inherit" });
} else {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const { ElicitRequestSchema, ToolListChangedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
  if (!["legacy", "default"].includes(opt.era)) log(`--sdk v1 speaks only the legacy era; --era ${opt.era} ignored`);
  client = new Client(clientInfo, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, (req) => answerElicitation(req.params));
  client.setNotificationHandler(ToolListChangedNotificationSchema, onToolsListChanged);
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: { ...process.env }, stderr: "inherit" });
  // v1 has no getNegotiatedProtocolVersion(): it hands the version to the transport instead.
  transport.setProtocolVersion = (v) => { out.protocolVersion = v; };
}
tap(transport);

const finish = async () => {
  out.ok = Object.keys(out.errors).length === 0;
  await withTimeout(Promise.resolve(subscription?.close()).catch(() => {}), 2000, "listen close").catch(() => {});
  await withTimeout(client.close(), 5000, "close").catch((e) => log("close:", e.message));
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(out.ok ? 0 : 1);
};

// ---- the scenario
const connected = await step("connect", async () => {
  await client.connect(transport);
  return true;
});
if (!connected) await finish();

if (opt.sdk === "v2") {
  out.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  out.era = client.getProtocolEra() ?? null;
} else {
  out.era = "legacy";
}
out.serverInfo = client.getServerVersion() ?? null;
out.capabilities = client.getServerCapabilities() ?? null;
log(`connected: ${out.protocolVersion} (${out.era}) to ${out.serverInfo?.name}`);

await step("listTools", async () => { out.tools = (await client.listTools()).tools.map((t) => t.name); });

if (opt.scenario === "everything") {
  await step("echo", async () => {
    const r = await client.callTool({ name: `${P}echo`, arguments: { message: "hi" } });
    out.echo = textOf(r);
    if (r.isError || out.echo !== "Echo: hi") throw new Error(`unexpected echo result ${JSON.stringify(r)}`);
  });
  await step("elicitation", async () => {
    const r = await client.callTool({ name: `${P}trigger-elicitation-request`, arguments: {} });
    out.twoRound = textOf(r);
    if (r.isError || !out.twoRound.includes("- Name: Ada")) throw new Error(`unexpected trigger-elicitation-request result ${JSON.stringify(r)}`);
    if (out.elicitations !== 1) throw new Error(`expected 1 elicitation, got ${out.elicitations}`);
  });
  await finish();
}
await step("echo", async () => {
  const r = await client.callTool({ name: `${P}echo`, arguments: { text: "hi" } });
  out.echo = textOf(r);
  if (r.isError || out.echo !== "echo: hi") throw new Error(`unexpected echo result ${JSON.stringify(r)}`);
});
await step("twoRound", async () => {
  const r = await client.callTool({ name: `${P}two_round`, arguments: {} });
  out.twoRound = textOf(r);
  if (r.isError || out.twoRound !== "name=Ada color=blue") throw new Error(`unexpected two_round result ${JSON.stringify(r)}`);
  if (out.elicitations !== 2) throw new Error(`expected 2 elicitations, got ${out.elicitations}`);
});

// Watch tools list changes. Modern era: nothing arrives unsolicited, so open a
// subscriptions/listen stream; the notifications on it go to the same handler.
if (out.era === "modern") {
  await step("listen", async () => {
    subscription = await client.listen({ toolsListChanged: true });
    out.listenHonoredFilter = subscription.honoredFilter ?? null;
  });
}
const listChangedSeen = new Promise((resolve) => { notifyListChanged = resolve; });
await step("addTool", async () => {
  const r = await client.callTool({ name: `${P}add_tool`, arguments: {} });
  if (r.isError) throw new Error(`add_tool failed: ${textOf(r)}`);
});
await step("listChanged", async () => {
  await listChangedSeen;
  out.listChanged = true;
});
await step("listToolsAfter", async () => {
  out.toolsAfter = (await client.listTools()).tools.map((t) => t.name);
  if (!out.toolsAfter.includes(`${P}added`)) throw new Error(`${P}added is not in the tools list`);
});

await finish();
