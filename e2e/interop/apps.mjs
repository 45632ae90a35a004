#!/usr/bin/env node
// MCP Apps interoperability check for mcp-simple-aggregator.
//
// Connects with the official TypeScript SDK client (v1: Client + StdioClientTransport) twice,
// both times declaring the MCP Apps extension
//     capabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes":["text/html;profile=mcp-app"]}
// once directly to the official ext-apps example server @modelcontextprotocol/server-basic-vanillajs
// (spawned by this script from ./node_modules, over stdio) and once to the command given after `--`
// (the aggregator, with that example server behind it under key --key). It compares what the
// two connections see, working on the raw JSON-RPC results (as read off the wire, before the
// SDK's schemas touch them):
//   initialize       the aggregator answers with its own serverInfo (--server-name) and
//                    capabilities tools and resources; the client really sent the extension
//   tools/list       KEY<sep>get-time equals the direct get-time in every field but the name,
//                    _meta.ui.resourceUri and _meta["ui/resourceUri"] included; the example's
//                    tools all appear prefixed
//   resources/list   the ui://get-time/mcp-app.html entry equals the direct one
//   resources/read   of ui://get-time/mcp-app.html: the same result (text/html;profile=mcp-app,
//                    the same HTML text, the same _meta if any)
//   tools/call       KEY<sep>get-time, and unprefixed get-time (as an app's HTML calls its own
//                    server's tool, relayed by the host), both succeed with the same shape as
//                    direct: structuredContent.time an ISO 8601 string equal to the text content
//   unprefixed       a tool of a child that serves no apps (--other-key's initparams) and an
//                    unknown name are refused with -32602 "Tool name must be prefixed ..."
//   child-capabilities  (with --other-key) OTHER<sep>initparams of the project's test server
//                    answers with the initialize params the child received: its
//                    capabilities.extensions["io.modelcontextprotocol/ui"] must be exactly what
//                    the client declared (and its capabilities all the client wrote)
//
// Output: stdout carries one JSON report {ok, checks: [{name, ok, ms, error?}], failures,
// timings, seen}; every failure is also printed to stderr as "apps.mjs: not ok NAME: reason".
// Exit code 0 if every check passed, 1 if one failed, 2 on bad usage. Child stderr is inherited.
//
// Usage:
//   node apps.mjs --sep SEP [--key apps] [--other-key other] [--server-name mcp-simple-aggregator]
//                 [--timeout MS] -- AGGREGATOR [ARGS...]
//   --sep S           the aggregator's separator (":" or "__"); required
//   --key K           the example server's key in the aggregator config (default "apps")
//   --other-key K     key of the project's test server (e2e/testserver) in the config; enables
//                     the unprefixed-refusal and child-capabilities checks (default: none)
//   --server-name N   serverInfo.name the aggregator must report (default "mcp-simple-aggregator")
//   --timeout MS      per-request time limit (default 10000); the whole run gets 6 times that
//
// Example (from e2e/interop, with an aggregator config cfg.json holding "apps" and "other"):
//   node apps.mjs --sep : --other-key other -- /path/to/mcp-simple-aggregator --config cfg.json

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXAMPLE_ENTRY = path.join(HERE, "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const APP_MIME = "text/html;profile=mcp-app";
const CLIENT_CAPABILITIES = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME] } } };
// The example server's surface (server-basic-vanillajs 2.0.3).
const TOOL = "get-time";
const UI_URI = "ui://get-time/mcp-app.html";

// ---------------------------------------------------------------------------------------------
// Options

function usage(msg) {
  const lines = fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1);
  const end = lines.findIndex((l) => !l.startsWith("//"));
  const head = lines.slice(0, end).map((l) => l.replace(/^\/\/ ?/, "")).join("\n");
  if (msg) { console.error(`apps.mjs: ${msg}\n`); console.error(head); process.exit(2); }
  console.log(head);
  process.exit(0);
}

function parseOptions(argv) {
  const o = { key: "apps", otherKey: "", serverName: "mcp-simple-aggregator", timeout: 10000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) usage(`missing value for ${a}`);
      return argv[++i];
    };
    switch (a) {
      case "--": o.command = argv[i + 1]; o.args = argv.slice(i + 2); i = argv.length; break;
      case "--sep": o.sep = val(); break;
      case "--key": o.key = val(); break;
      case "--other-key": o.otherKey = val(); break;
      case "--server-name": o.serverName = val(); break;
      case "--timeout": o.timeout = Number(val()); break;
      case "-h": case "--help": usage(); break;
      default: usage(`unknown argument ${a}`);
    }
  }
  if (!o.command) usage("no command given (put the aggregator after --)");
  if (!o.sep) usage("--sep is required");
  if (!o.key) usage("--key must not be empty");
  if (!Number.isFinite(o.timeout) || o.timeout <= 0) usage("bad --timeout");
  return o;
}

// ---------------------------------------------------------------------------------------------
// Helpers

class CheckError extends Error {}
function assert(cond, msg) { if (!cond) throw new CheckError(msg); }

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, rej) => { timer = setTimeout(() => rej(new CheckError(`${what} timed out after ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

// Returns undefined if a and b are deep-equal (JSON values, key order ignored), else the path
// and values of the first difference.
function diff(a, b, p = "$") {
  if (a === b) return undefined;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") {
    return `${p}: ${short(a)} != ${short(b)}`;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return `${p}: array vs object`;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return `${p}: length ${a.length} != ${b.length}`;
    for (let i = 0; i < a.length; i++) { const d = diff(a[i], b[i], `${p}[${i}]`); if (d) return d; }
    return undefined;
  }
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!(k in a)) return `${p}.${k}: missing on the left, ${short(b[k])} on the right`;
    if (!(k in b)) return `${p}.${k}: ${short(a[k])} on the left, missing on the right`;
    const d = diff(a[k], b[k], `${p}.${k}`);
    if (d) return d;
  }
  return undefined;
}
function short(v, n = 200) {
  let s;
  try { s = JSON.stringify(v); } catch { s = String(v); }
  if (s === undefined) s = String(v);
  return s.length > n ? s.slice(0, n) + "…" : s;
}
function without(obj, key) {
  const o = { ...obj };
  delete o[key];
  return o;
}
// The type skeleton of a JSON value: what must agree between two results whose values differ.
function shape(v) {
  if (Array.isArray(v)) return v.map(shape);
  if (v === null) return null;
  if (typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = shape(v[k]);
    return o;
  }
  return typeof v;
}
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
function isISOTime(s) {
  return typeof s === "string" && ISO_8601.test(s) && !Number.isNaN(Date.parse(s));
}

// ---------------------------------------------------------------------------------------------
// One connection: an SDK client whose transport is tapped both ways, so that the raw
// JSON-RPC messages (the initialize request as sent, every result as received) can be compared.

class Conn {
  constructor(label, command, args, timeout) {
    this.label = label;
    this.timeout = timeout;
    this.sent = []; // outbound JSON-RPC messages, as handed to the transport
    this.responses = new Map(); // id -> inbound response, as parsed off the wire
    this.initializeResult = undefined;
    this.errors = [];
    this.client = new Client(
      { name: "mcp-simple-aggregator-apps-interop", version: "1.0.0" },
      // extensions is in the SDK's ClientCapabilities (1.32.2); the tap below checks it is sent.
      { capabilities: CLIENT_CAPABILITIES },
    );
    this.client.onerror = (e) => { if (!this.closing) this.errors.push(String(e?.message ?? e)); };
    this.transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
    const send = this.transport.send.bind(this.transport);
    this.transport.send = (msg, opts) => { this.sent.push(structuredClone(msg)); return send(msg, opts); };
    let inner;
    const self = this;
    Object.defineProperty(this.transport, "onmessage", {
      configurable: true,
      get() { return inner; },
      set(fn) {
        inner = fn && ((msg, extra) => {
          if (msg && msg.id !== undefined && !msg.method) self.responses.set(msg.id, structuredClone(msg));
          return fn(msg, extra);
        });
      },
    });
  }

  async connect() {
    const t0 = performance.now();
    await withTimeout(this.client.connect(this.transport, { timeout: this.timeout }), this.timeout, `${this.label}: initialize`);
    this.connectMs = performance.now() - t0;
    const init = this.sent.find((m) => m.method === "initialize");
    this.initializeRequest = init;
    this.initializeResult = this.responses.get(init?.id)?.result;
  }

  // Runs fn (one SDK request), then returns [SDK value, raw result off the wire] of the one
  // request of that method it sent.
  async raw(method, fn) {
    const from = this.sent.length;
    const value = await withTimeout(fn({ timeout: this.timeout }), this.timeout, `${this.label}: ${method}`);
    const reqs = this.sent.slice(from).filter((m) => m.method === method);
    assert(reqs.length === 1, `${this.label}: expected one ${method} request on the wire, saw ${reqs.length}`);
    const resp = this.responses.get(reqs[0].id);
    assert(resp && "result" in resp, `${this.label}: no raw result for ${method} id ${short(reqs[0].id)}`);
    return [value, resp.result];
  }

  // Every page of a list method, raw.
  async list(method, member, sdkCall) {
    const items = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
      const [, r] = await this.raw(method, (o) => sdkCall(cursor === undefined ? {} : { cursor }, o));
      assert(Array.isArray(r[member]), `${this.label}: ${method} result has no ${member} array: ${short(r)}`);
      items.push(...r[member]);
      if (!r.nextCursor) return items;
      cursor = r.nextCursor;
    }
    throw new CheckError(`${this.label}: ${method} did not end after 100 pages`);
  }

  async close() {
    this.closing = true;
    const t0 = performance.now();
    try { await this.client.close(); } catch { /* ignore */ }
    this.closeMs = performance.now() - t0;
  }
}

// ---------------------------------------------------------------------------------------------
// The run

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  const T = opts.timeout;
  const P = (name) => opts.key + opts.sep + name;
  const O = (name) => opts.otherKey + opts.sep + name;
  const report = { ok: false, sep: opts.sep, key: opts.key, otherKey: opts.otherKey || null, checks: [], failures: [], timings: {}, seen: {} };
  const tStart = performance.now();

  const watchdog = setTimeout(() => {
    report.failures.push(`watchdog: run exceeded ${6 * T} ms`);
    console.error(`apps.mjs: not ok watchdog: run exceeded ${6 * T} ms`);
    console.log(JSON.stringify(report, null, 2));
    process.exit(1);
  }, 6 * T);

  const direct = new Conn("direct", process.execPath, [EXAMPLE_ENTRY, "--stdio"], T);
  const agg = new Conn("aggregator", opts.command, opts.args, T);

  const check = async (name, fn) => {
    const t0 = performance.now();
    const entry = { name, ok: false, ms: 0 };
    try {
      await withTimeout(Promise.resolve().then(fn), T, name);
      entry.ok = true;
    } catch (e) {
      // A failed check or a JSON-RPC error: its message; anything else (a bug here): its stack.
      const what = e instanceof CheckError ? e.message
        : typeof e?.code === "number" ? `JSON-RPC error ${e.code}: ${e.message}` : (e?.stack ?? e);
      entry.error = String(what).replace(/\s+/g, " ");
      report.failures.push(`${name}: ${entry.error}`);
      console.error(`apps.mjs: not ok ${name}: ${entry.error}`);
    }
    entry.ms = Math.round(performance.now() - t0);
    report.checks.push(entry);
    return entry.ok;
  };

  try {
    // Both connections; nothing else can be compared without them.
    const connected = await check("connect", async () => {
      await Promise.all([direct.connect(), agg.connect()]);
      report.timings.connectDirectMs = Math.round(direct.connectMs);
      report.timings.connectAggregatorMs = Math.round(agg.connectMs);
    });
    if (!connected) return 1;

    await check("initialize", async () => {
      for (const c of [direct, agg]) {
        const sentCaps = c.initializeRequest?.params?.capabilities;
        assert(diff(sentCaps?.extensions, CLIENT_CAPABILITIES.extensions) === undefined,
          `${c.label}: the SDK client did not send the extension as declared: capabilities ${short(sentCaps)}`);
      }
      const d = direct.initializeResult, a = agg.initializeResult;
      report.seen.directInitialize = d;
      report.seen.aggregatorInitialize = a;
      assert(d && a, `no raw initialize result (direct ${short(d)}, aggregator ${short(a)})`);
      assert(a.serverInfo?.name === opts.serverName,
        `aggregator serverInfo.name ${short(a.serverInfo?.name)}, want ${short(opts.serverName)}`);
      assert(diff(a.serverInfo, d.serverInfo) !== undefined, `aggregator passed the child's serverInfo up: ${short(a.serverInfo)}`);
      assert(a.capabilities && typeof a.capabilities.tools === "object", `aggregator capabilities lack tools: ${short(a.capabilities)}`);
      assert(typeof a.capabilities.resources === "object", `aggregator capabilities lack resources: ${short(a.capabilities)}`);
      assert(typeof d.capabilities?.tools === "object" && typeof d.capabilities?.resources === "object",
        `example server capabilities lack tools/resources: ${short(d.capabilities)}`);
    });

    // tools/list
    await check("tools-list", async () => {
      const dTools = await direct.list("tools/list", "tools", (p, o) => direct.client.listTools(p, o));
      const aTools = await agg.list("tools/list", "tools", (p, o) => agg.client.listTools(p, o));
      const d = dTools.find((t) => t.name === TOOL);
      assert(d, `direct tools/list has no ${TOOL}: ${short(dTools.map((t) => t.name))}`);
      const a = aTools.find((t) => t.name === P(TOOL));
      report.seen.directTool = d;
      report.seen.aggregatorTool = a;
      assert(a, `aggregator tools/list has no ${P(TOOL)}: ${short(aTools.map((t) => t.name), 600)}`);
      const dd = diff(without(a, "name"), without(d, "name"));
      assert(dd === undefined, `${P(TOOL)} differs from direct ${TOOL} (aggregator left, direct right): ${dd}`);
      assert(a._meta?.ui?.resourceUri === UI_URI, `_meta.ui.resourceUri ${short(a._meta?.ui?.resourceUri)}, want ${UI_URI}`);
      assert(a._meta?.["ui/resourceUri"] === UI_URI, `_meta["ui/resourceUri"] ${short(a._meta?.["ui/resourceUri"])}, want ${UI_URI}`);
      // Every tool of the example server, and no other, under the key's prefix.
      const want = dTools.map((t) => P(t.name)).sort();
      const got = aTools.filter((t) => t.name.startsWith(opts.key + opts.sep)).map((t) => t.name).sort();
      assert(diff(got, want) === undefined, `prefixed tools ${short(got)}, want ${short(want)}`);
      assert(!aTools.some((t) => t.name === TOOL), `aggregator lists the unprefixed ${TOOL}`);
    });

    // resources/list
    await check("resources-list", async () => {
      const dRes = await direct.list("resources/list", "resources", (p, o) => direct.client.listResources(p, o));
      const aRes = await agg.list("resources/list", "resources", (p, o) => agg.client.listResources(p, o));
      const d = dRes.filter((r) => r.uri === UI_URI);
      const a = aRes.filter((r) => r.uri === UI_URI);
      report.seen.directResource = d[0];
      report.seen.aggregatorResource = a[0];
      assert(d.length === 1, `direct resources/list has ${d.length} entries for ${UI_URI}`);
      assert(a.length === 1, `aggregator resources/list has ${a.length} entries for ${UI_URI}: ${short(aRes.map((r) => r.uri), 600)}`);
      const dd = diff(a[0], d[0]);
      assert(dd === undefined, `${UI_URI} entry differs (aggregator left, direct right): ${dd}`);
      assert(a[0].mimeType === APP_MIME, `mimeType ${short(a[0].mimeType)}, want ${APP_MIME}`);
    });

    // resources/read
    await check("resources-read", async () => {
      const [, d] = await direct.raw("resources/read", (o) => direct.client.readResource({ uri: UI_URI }, o));
      const [, a] = await agg.raw("resources/read", (o) => agg.client.readResource({ uri: UI_URI }, o));
      const summary = (r) => ({
        keys: Object.keys(r).sort(),
        contents: (r.contents ?? []).map((c) => ({ ...without(c, "text"), textBytes: Buffer.byteLength(c.text ?? "") })),
      });
      report.seen.directRead = summary(d);
      report.seen.aggregatorRead = summary(a);
      assert(Array.isArray(d.contents) && d.contents.length === 1, `direct read: ${short(summary(d))}`);
      const dc = d.contents[0];
      assert(dc.uri === UI_URI && dc.mimeType === APP_MIME && /<html/i.test(dc.text ?? ""), `direct content: ${short(without(dc, "text"))}`);
      const dd = diff(a, d);
      assert(dd === undefined, `resources/read differs (aggregator left, direct right): ${dd}`);
    });

    // tools/call: prefixed, and unprefixed as an app's HTML would call it.
    const timeShape = (label, r) => {
      assert(!r.isError, `${label}: isError: ${short(r)}`);
      const t = r.structuredContent?.time;
      assert(isISOTime(t), `${label}: structuredContent.time is not an ISO 8601 string: ${short(r.structuredContent)}`);
      const text = (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
      assert(isISOTime(text) && Date.parse(text) === Date.parse(t), `${label}: text content ${short(text)} does not parse to structuredContent.time ${t}`);
    };
    let directCall;
    await check("call-direct", async () => {
      [, directCall] = await direct.raw("tools/call", (o) => direct.client.callTool({ name: TOOL, arguments: {} }, undefined, o));
      report.seen.directCall = directCall;
      timeShape("direct", directCall);
    });
    for (const [name, label] of [[P(TOOL), "call-prefixed"], [TOOL, "call-unprefixed"]]) {
      await check(label, async () => {
        const [, r] = await agg.raw("tools/call", (o) => agg.client.callTool({ name, arguments: {} }, undefined, o));
        report.seen[label === "call-prefixed" ? "aggregatorCallPrefixed" : "aggregatorCallUnprefixed"] = r;
        timeShape(`${name} through the aggregator`, r);
        assert(directCall, "no direct result to compare with");
        const dd = diff(shape(r), shape(directCall));
        assert(dd === undefined, `${name}: result shape differs from direct (aggregator left, direct right): ${dd}`);
      });
    }

    if (opts.otherKey) {
      // Unprefixed names that no app serves are still refused.
      await check("unprefixed-refused", async () => {
        for (const name of ["initparams", "interop-no-such-tool"]) {
          let err = null;
          try {
            await withTimeout(agg.client.callTool({ name, arguments: {} }, undefined, { timeout: T }), T, `tools/call ${name}`);
          } catch (e) { err = e; }
          assert(err, `unprefixed ${name} was not refused`);
          assert(err.code === -32602, `unprefixed ${name}: code ${err.code} (${err.message}), want -32602`);
          assert(String(err.message).includes(`Tool name must be prefixed with server key: ${name}`), `unprefixed ${name}: message ${short(err.message)}`);
        }
      });

      // The child's view of the initialize params: the extension must reach it as written.
      await check("child-capabilities", async () => {
        const [, r] = await agg.raw("tools/call", (o) => agg.client.callTool({ name: O("initparams"), arguments: {} }, undefined, o));
        assert(!r.isError, `${O("initparams")}: isError: ${short(r)}`);
        const text = (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
        let params;
        try { params = JSON.parse(text); } catch (e) { throw new CheckError(`${O("initparams")} text is not JSON: ${short(text)}`); }
        report.seen.childInitializeParams = params;
        const got = params?.capabilities?.extensions?.[UI_EXTENSION];
        const dd = diff(got, CLIENT_CAPABILITIES.extensions[UI_EXTENSION]);
        assert(dd === undefined, `child saw capabilities.extensions["${UI_EXTENSION}"] ${short(got)}, the client declared ${short(CLIENT_CAPABILITIES.extensions[UI_EXTENSION])}: ${dd}`);
        const sent = agg.initializeRequest.params.capabilities;
        const dc = diff(params.capabilities, sent);
        assert(dc === undefined, `child capabilities ${short(params.capabilities)} differ from what the client sent ${short(sent)}: ${dc}`);
      });
    }

    await check("no-client-errors", async () => {
      for (const c of [direct, agg]) assert(!c.errors.length, `${c.label}: ${c.errors.length} client error(s), first: ${short(c.errors[0], 300)}`);
    });
  } finally {
    await Promise.all([direct.close(), agg.close()]);
    report.timings.closeDirectMs = Math.round(direct.closeMs ?? 0);
    report.timings.closeAggregatorMs = Math.round(agg.closeMs ?? 0);
    report.timings.totalMs = Math.round(performance.now() - tStart);
    clearTimeout(watchdog);
    report.ok = report.failures.length === 0 && report.checks.length > 0;
    console.log(JSON.stringify(report, null, 2));
  }
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(`apps.mjs: internal error: ${e?.stack ?? e}`);
    console.log(JSON.stringify({ ok: false, failures: [`internal: ${String(e?.message ?? e)}`], checks: [] }));
    process.exit(1);
  },
);
