// Helpers shared by the interop scripts (client.mjs, apps.mjs, tasks.mjs): option parsing and
// usage text, checks and timeouts, JSON comparison, a transport tap that sees the raw JSON-RPC
// messages, a connection built on it (WireConn), and the JSON report with its checks (Run).

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const EVERYTHING_ENTRY = path.join(HERE, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

// ---------------------------------------------------------------------------------------------
// Options

// usageOf returns the usage function of the script at scriptUrl (its import.meta.url): the
// script's leading comment is its help. usage() prints it and exits 0; usage(msg) prints msg
// and the help to stderr and exits 2.
export function usageOf(scriptUrl) {
  const file = fileURLToPath(scriptUrl);
  const name = path.basename(file);
  return (msg) => {
    const lines = fs.readFileSync(file, "utf8").split("\n").slice(1);
    const end = lines.findIndex((l) => !l.startsWith("//"));
    const head = lines.slice(0, end).map((l) => l.replace(/^\/\/ ?/, "")).join("\n");
    if (msg) { console.error(`${name}: ${msg}\n`); console.error(head); process.exit(2); }
    console.log(head);
    process.exit(0);
  };
}

// parseArgs reads argv by flags: flag -> key (the flag takes a value) or flag -> [key, value]
// (a switch that sets key to value). -h/--help prints the usage; what follows `--` is rest
// (null without `--`).
export function parseArgs(argv, flags, usage) {
  const values = {};
  let rest = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") { rest = argv.slice(i + 1); break; }
    if (a === "-h" || a === "--help") usage();
    if (!Object.hasOwn(flags, a)) usage(`unknown argument ${a}`);
    const f = flags[a];
    if (Array.isArray(f)) { values[f[0]] = f[1]; continue; }
    if (i + 1 >= argv.length) usage(`missing value for ${a}`);
    values[f] = argv[++i];
  }
  return { values, rest };
}

// The options of the scripts that compare the aggregator with a direct connection (apps.mjs,
// tasks.mjs): --sep, --key, --other-key, --server-name, --timeout, then `--` and the command.
export function parseCompareOptions(argv, usage, defaultKey) {
  const { values, rest } = parseArgs(argv, {
    "--sep": "sep", "--key": "key", "--other-key": "otherKey", "--server-name": "serverName", "--timeout": "timeout",
  }, usage);
  const o = { key: defaultKey, otherKey: "", serverName: "mcp-simple-aggregator", ...values, timeout: Number(values.timeout ?? 10000) };
  if (rest) { o.command = rest[0]; o.args = rest.slice(1); }
  if (!o.command) usage("no command given (put the aggregator after --)");
  if (!o.sep) usage("--sep is required");
  if (!o.key) usage("--key must not be empty");
  if (!Number.isFinite(o.timeout) || o.timeout <= 0) usage("bad --timeout");
  return o;
}

// ---------------------------------------------------------------------------------------------
// Checks, time limits, JSON values

export class CheckError extends Error {}
export function assert(cond, msg) { if (!cond) throw new CheckError(msg); }

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, rej) => { timer = setTimeout(() => rej(new CheckError(`${what} timed out after ${ms} ms`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

// Returns undefined if a and b are deep-equal (JSON values, key order ignored), else the path
// and values of the first difference.
export function diff(a, b, p = "$") {
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
export function short(v, n = 200) {
  let s;
  try { s = JSON.stringify(v); } catch { s = String(v); }
  if (s === undefined) s = String(v);
  return s.length > n ? s.slice(0, n) + "…" : s;
}
export function without(obj, ...keys) {
  const o = { ...obj };
  for (const k of keys) delete o[k];
  return o;
}
// The type skeleton of a JSON value: what must agree between two results whose values differ.
export function shape(v) {
  if (Array.isArray(v)) return v.map(shape);
  if (v === null) return null;
  if (typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = shape(v[k]);
    return o;
  }
  return typeof v;
}
// The text items of a tool result, joined by sep.
export function textOf(result, sep = "\n") {
  return (result?.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join(sep);
}

// ---------------------------------------------------------------------------------------------
// Waiting on what arrives: no polling; whoever records something calls wake(), which re-runs
// the tests of the waiters.

export class Waiters {
  constructor() { this.list = []; }
  wake() {
    for (const w of [...this.list]) {
      const v = w.test();
      if (v !== undefined) { this.list.splice(this.list.indexOf(w), 1); w.resolve(v); }
    }
  }
  // Resolves with the first value other than undefined that test() returns, now or at a
  // wake(); rejects with a CheckError(timeoutMessage) after ms.
  until(test, ms, timeoutMessage) {
    const v = test();
    if (v !== undefined) return Promise.resolve(v);
    return new Promise((resolve, reject) => {
      const w = { test, resolve };
      this.list.push(w);
      setTimeout(() => {
        const i = this.list.indexOf(w);
        if (i >= 0) { this.list.splice(i, 1); reject(new CheckError(timeoutMessage)); }
      }, ms);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Connections

// tapTransport calls onSend with every outbound JSON-RPC message as handed to the transport and
// onReceive with every inbound one as parsed off the wire, before the SDK client sees it.
export function tapTransport(transport, { onSend, onReceive }) {
  if (onSend) {
    const send = transport.send.bind(transport);
    transport.send = (msg, opts) => { onSend(msg); return send(msg, opts); };
  }
  let inner;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get() { return inner; },
    set(fn) {
      inner = fn && ((msg, extra) => {
        onReceive(msg);
        return fn(msg, extra);
      });
    },
  });
}

// WireConn: an SDK client (v1: Client + StdioClientTransport) over a spawned command, whose
// transport is tapped both ways, so that the raw JSON-RPC messages (requests and answers as
// sent, every message as received) can be compared. opts: timeout (per request), clientName,
// capabilities, pipeStderr (copy the child's stderr to ours and keep it in stderrText, waking
// the waiters; otherwise it is inherited).
export class WireConn {
  constructor(label, command, args, { timeout, clientName, capabilities, pipeStderr = false }) {
    this.label = label;
    this.timeout = timeout;
    this.sent = []; // outbound JSON-RPC messages, as handed to the transport
    this.inbound = []; // inbound JSON-RPC messages, as parsed off the wire, in order
    this.responses = new Map(); // id -> inbound response
    this.waiters = new Waiters();
    this.errors = [];
    this.stderrText = "";
    this.initializeResult = undefined;
    this.client = new Client({ name: clientName, version: "1.0.0" }, { capabilities });
    this.client.onerror = (e) => { if (!this.closing) this.errors.push(String(e?.message ?? e)); };
    this.transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: pipeStderr ? "pipe" : "inherit" });
    if (pipeStderr) {
      this.transport.stderr.on("data", (chunk) => {
        process.stderr.write(chunk);
        this.stderrText += chunk.toString();
        this.wake();
      });
    }
    tapTransport(this.transport, {
      onSend: (msg) => { this.sent.push(structuredClone(msg)); },
      onReceive: (msg) => {
        const copy = structuredClone(msg);
        this.inbound.push(copy);
        if (copy && copy.id !== undefined && !copy.method) this.responses.set(copy.id, copy);
        this.wake();
      },
    });
  }

  wake() { this.waiters.wake(); }
  waitUntil(test, ms, what) { return this.waiters.until(test, ms, `${this.label}: no ${what} within ${ms} ms`); }
  notifications(method, from = 0) { return this.inbound.slice(from).filter((m) => m.method === method && m.id === undefined); }
  requestsIn(method, from = 0) { return this.inbound.slice(from).filter((m) => m.method === method && m.id !== undefined); }
  // Our answer on the wire to the server's request id.
  answerTo(id) { return this.sent.find((m) => m.id === id && !m.method); }

  async connect() {
    const t0 = performance.now();
    await withTimeout(this.client.connect(this.transport, { timeout: this.timeout }), this.timeout, `${this.label}: initialize`);
    this.connectMs = performance.now() - t0;
    const init = this.sent.find((m) => m.method === "initialize");
    this.initializeRequest = init;
    this.initializeResult = this.responses.get(init?.id)?.result;
  }

  // Runs fn (one SDK request), then returns the raw response (result or error) off the wire of
  // the one request of that method it sent, the request, and what the SDK threw if anything.
  async rawExchange(method, fn) {
    const from = this.sent.length;
    let thrown;
    try {
      await withTimeout(fn({ timeout: this.timeout }), this.timeout, `${this.label}: ${method}`);
    } catch (e) {
      if (e instanceof CheckError) throw e;
      thrown = e;
    }
    const reqs = this.sent.slice(from).filter((m) => m.method === method);
    assert(reqs.length === 1, `${this.label}: expected one ${method} request on the wire, saw ${reqs.length}${thrown ? ` (${thrown.message})` : ""}`);
    const resp = this.responses.get(reqs[0].id);
    assert(resp, `${this.label}: no response to ${method} id ${short(reqs[0].id)}${thrown ? ` (${thrown.message})` : ""}`);
    return { request: reqs[0], response: resp, thrown };
  }
  // The raw result of one request; a JSON-RPC error fails the step, quoting both lines, and so
  // does a result the SDK client rejected.
  async raw(method, fn) {
    const { request, response, thrown } = await this.rawExchange(method, fn);
    assert("result" in response, `${this.label}: ${method} failed: sent ${short(request, 400)} got ${short(response, 400)}`);
    if (thrown) throw new CheckError(`${this.label}: the SDK client rejected the result of ${method} ${short(response.result, 400)}: ${thrown.message}`);
    return response.result;
  }
  // The raw error of one request that must fail.
  async rawError(method, fn) {
    const { request, response } = await this.rawExchange(method, fn);
    assert("error" in response, `${this.label}: ${method} succeeded where an error was due: sent ${short(request, 400)} got ${short(response, 600)}`);
    return response.error;
  }

  // Every page of a list method, raw (at most maxPages); sdkCall(params, requestOptions) makes
  // one request, params holding the cursor after the first page.
  async list(method, member, sdkCall, maxPages = 20) {
    const items = [];
    let cursor;
    for (let page = 0; page < maxPages; page++) {
      const r = await this.raw(method, (o) => sdkCall(cursor === undefined ? {} : { cursor }, o));
      assert(Array.isArray(r[member]), `${this.label}: ${method} result has no ${member} array: ${short(r)}`);
      items.push(...r[member]);
      if (!r.nextCursor) return items;
      cursor = r.nextCursor;
    }
    throw new CheckError(`${this.label}: ${method} did not end after ${maxPages} pages`);
  }
  listTools(maxPages) { return this.list("tools/list", "tools", (p, o) => this.client.listTools(p, o), maxPages); }

  async close() {
    this.closing = true;
    const t0 = performance.now();
    try { await this.client.close(); } catch { /* ignore */ }
    this.closeMs = performance.now() - t0;
  }
}

// ---------------------------------------------------------------------------------------------
// The JSON report of a comparing script and its checks

// Run holds the report {ok, sep, key, otherKey, checks: [{name, ok, ms, error?}], failures,
// timings, seen, ...extra} of the script called script, and a watchdog that prints it and exits
// 1 once the run has taken runLimit ms.
export class Run {
  constructor(script, opts, runLimit, extra = {}) {
    this.script = script;
    this.timeout = opts.timeout;
    this.report = { ok: false, sep: opts.sep, key: opts.key, otherKey: opts.otherKey || null, checks: [], failures: [], timings: {}, seen: {}, ...extra };
    this.tStart = performance.now();
    this.watchdog = setTimeout(() => {
      this.report.failures.push(`watchdog: run exceeded ${runLimit} ms`);
      console.error(`${script}: not ok watchdog: run exceeded ${runLimit} ms`);
      console.log(JSON.stringify(this.report, null, 2));
      process.exit(1);
    }, runLimit);
  }

  // Runs fn as the check called name within limit ms; records it and returns whether it passed.
  async check(name, fn, limit = this.timeout) {
    const t0 = performance.now();
    const entry = { name, ok: false, ms: 0 };
    try {
      await withTimeout(Promise.resolve().then(fn), limit, name);
      entry.ok = true;
    } catch (e) {
      // A failed check or a JSON-RPC error: its message; anything else (a bug here): its stack.
      const what = e instanceof CheckError ? e.message
        : typeof e?.code === "number" ? `JSON-RPC error ${e.code}: ${e.message}` : (e?.stack ?? e);
      entry.error = String(what).replace(/\s+/g, " ");
      this.report.failures.push(`${name}: ${entry.error}`);
      console.error(`${this.script}: not ok ${name}: ${entry.error}`);
    }
    entry.ms = Math.round(performance.now() - t0);
    this.report.checks.push(entry);
    return entry.ok;
  }

  // Runs the checks: "connect", then (if both connected) body's, then "no-client-errors"; then
  // finish, whatever happened. Returns the exit code.
  async compare(direct, agg, body) {
    try {
      if (await this.connect(direct, agg)) {
        await body();
        await this.noClientErrors([direct, agg]);
      }
    } finally {
      await this.finish(direct, agg);
    }
    return this.report.ok ? 0 : 1;
  }

  // The check "connect": both connections at once; nothing else can be compared without them.
  connect(direct, agg) {
    return this.check("connect", async () => {
      await Promise.all([direct.connect(), agg.connect()]);
      this.report.timings.connectDirectMs = Math.round(direct.connectMs);
      this.report.timings.connectAggregatorMs = Math.round(agg.connectMs);
    });
  }

  // Keeps both initialize results in seen (through keep) and checks that both came and that the
  // aggregator answered with its own serverInfo.name; returns [direct's, aggregator's].
  initializeResults(direct, agg, serverName, keep = (r) => r) {
    const d = direct.initializeResult, a = agg.initializeResult;
    this.report.seen.directInitialize = d && keep(d);
    this.report.seen.aggregatorInitialize = a && keep(a);
    assert(d && a, `no raw initialize result (direct ${short(d)}, aggregator ${short(a)})`);
    assert(a.serverInfo?.name === serverName, `aggregator serverInfo.name ${short(a.serverInfo?.name)}, want ${short(serverName)}`);
    return [d, a];
  }

  // The check "no-client-errors": no SDK client reported a protocol error.
  noClientErrors(conns) {
    return this.check("no-client-errors", async () => {
      for (const c of conns) assert(!c.errors.length, `${c.label}: ${c.errors.length} client error(s), first: ${short(c.errors[0], 300)}`);
    });
  }

  // Closes the connections, completes and prints the report; returns the exit code.
  async finish(direct, agg) {
    await Promise.all([direct.close(), agg.close()]);
    const r = this.report;
    r.timings.closeDirectMs = Math.round(direct.closeMs ?? 0);
    r.timings.closeAggregatorMs = Math.round(agg.closeMs ?? 0);
    r.timings.totalMs = Math.round(performance.now() - this.tStart);
    clearTimeout(this.watchdog);
    r.ok = r.failures.length === 0 && r.checks.length > 0;
    console.log(JSON.stringify(r, null, 2));
    return r.ok ? 0 : 1;
  }
}

// Compares the entry of tool in the direct listing with that of prefixed in the aggregator's
// (kept in seen as directTool and aggregatorTool): both there, equal but for the name, and the
// aggregator does not list tool unprefixed. Returns [direct's, aggregator's].
export function sameToolEntry(report, dTools, aTools, tool, prefixed) {
  const d = dTools.find((t) => t.name === tool);
  const a = aTools.find((t) => t.name === prefixed);
  report.seen.directTool = d;
  report.seen.aggregatorTool = a;
  assert(d, `direct tools/list has no ${tool}: ${short(dTools.map((t) => t.name))}`);
  assert(a, `aggregator tools/list has no ${prefixed}: ${short(aTools.map((t) => t.name), 600)}`);
  const dd = diff(without(a, "name"), without(d, "name"));
  assert(dd === undefined, `${prefixed} differs from direct ${tool} (aggregator left, direct right): ${dd}`);
  assert(!aTools.some((t) => t.name === tool), `aggregator lists the unprefixed ${tool}`);
  return [d, a];
}

// The initialize params a child of the aggregator received, as the project's test server
// (e2e/testserver) returns them from its tool initparams (called tool here); kept in seen as
// childInitializeParams.
export async function childInitializeParams(report, agg, tool) {
  const r = await agg.raw("tools/call", (o) => agg.client.callTool({ name: tool, arguments: {} }, undefined, o));
  assert(!r.isError, `${tool}: isError: ${short(r)}`);
  let params;
  try { params = JSON.parse(textOf(r)); } catch { throw new CheckError(`${tool} text is not JSON: ${short(textOf(r))}`); }
  report.seen.childInitializeParams = params;
  return params;
}

// Runs main (which returns the exit code) and exits; an exception is reported as an internal
// error in a JSON report.
export function runMain(script, main) {
  main().then(
    (code) => process.exit(code),
    (e) => {
      console.error(`${script}: internal error: ${e?.stack ?? e}`);
      console.log(JSON.stringify({ ok: false, failures: [`internal: ${String(e?.message ?? e)}`], checks: [] }));
      process.exit(1);
    },
  );
}
