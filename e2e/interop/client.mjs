#!/usr/bin/env node
// Interoperability test peer for mcp-simple-aggregator.
//
// An MCP client built on the official TypeScript SDK (Client + StdioClientTransport).
// It spawns the command given after `--` and runs named checks against it. The command is
// either the aggregator (`BIN --config CFG`) with @modelcontextprotocol/server-everything
// and @modelcontextprotocol/server-filesystem behind it, or (for development) one of those
// servers directly. Each check prints exactly one line on stdout:
//     ok NAME | not ok NAME: reason | skip NAME: reason
// Diagnostics go to stdout as lines starting with "# ", child stderr is inherited.
// The last line is "N passed, M failed" (skips are not counted); exit code 1 if M > 0.
//
// Usage:
//   node client.mjs [options] -- COMMAND [ARGS...]
//   node client.mjs --print-config [--fs-dir DIR]   print an aggregator config that uses the
//                                                   servers installed in ./node_modules
// Options (each may also be given as a key of a JSON object in --spec JSON or env INTEROP_SPEC;
// precedence: command line > --spec > INTEROP_SPEC):
//   --servers LIST           servers behind the connection, comma separated subset of
//                            "everything,fs" (JSON key "servers", array or string). Default: both.
//   --prefix-everything P    prefix of server-everything's tool and prompt names ("prefixEverything").
//   --prefix-fs P            prefix of server-filesystem's tool names ("prefixFs"). Both default "".
//   --sep S                  separator ("sep"); only validated: every non-empty prefix must end in S.
//   --only LIST / --skip LIST   run only / skip these case names ("only", "skip").
//   --root DIR               directory announced as the client's single root ("root"). Default: a
//                            fresh temporary directory (deleted at exit). server-filesystem replaces
//                            its allowed directories with the client's roots, so the fs checks work
//                            inside this directory and thereby prove that roots/list is relayed.
//   --timeout MS             per-case time limit, default 10000 ("timeout").
//   --no-reference           do not spawn a direct server-everything for comparisons ("reference": false).
//   --lenient-startup-list-changed   report tools-list-changed as skip instead of failure when no
//                            notifications/tools/list_changed arrives after connect ("lenientStartupListChanged").
//   --verbose                print every notification received as a "# " line ("verbose").
//   JSON keys "command" (string) and "args" (array) may replace the part after `--`.
//
// Examples:
//   direct:     node client.mjs --servers everything -- node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
//               node client.mjs --servers fs -- node node_modules/@modelcontextprotocol/server-filesystem/dist/index.js /tmp
//   aggregator: node client.mjs --sep : --prefix-everything everything: --prefix-fs fs: -- BIN --config CFG
//
// Cases (in run order; "needs" = which server must be under test, otherwise the case is skipped):
//   initialize, ping, list, tool-definitions(everything), tools-list-changed(everything), call(everything),
//   errors(everything), error-data(everything), concurrent(everything), fs(fs), sampling, elicitation,
//   elicitation-url, roots, log-on-init (everything), progress, cancellation, resources, subscribe,
//   resources-list-changed, prompts, completion, logging (all everything), roots-list-changed
//   (everything and/or fs), no-protocol-errors, shutdown.
// Comparisons "same as a direct connection" are made against a second, directly spawned
// server-everything (the reference) that this script starts itself from ./node_modules.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  PromptListChangedNotificationSchema,
  LATEST_PROTOCOL_VERSION,
} from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { pathToFileURL } from "node:url";
import {
  EVERYTHING_ENTRY, HERE, CheckError, Waiters, assert, diff, parseArgs, short, sleep, tapTransport, textOf, usageOf, withTimeout,
} from "./lib.mjs";

const EVERYTHING_DOCS = path.join(HERE, "node_modules/@modelcontextprotocol/server-everything/dist/docs");
const FS_ENTRY = path.join(HERE, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

// ---------------------------------------------------------------------------------------------
// Expected surface of the pinned server versions (server-everything 2026.8.31,
// server-filesystem 2026.8.31).

// Registered by server-everything regardless of client capabilities (simulate-research-query is
// registered after initialization, but unconditionally).
const EVERYTHING_BASE_TOOLS = [
  "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
  "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
  "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
  "simulate-research-query",
];
// Registered only after initialization, and only because this client declares
// roots / elicitation (form+url) / sampling. (The *-async variants additionally need the
// client "tasks" capability, which this client does not declare, so they must be absent.)
const EVERYTHING_CONDITIONAL_TOOLS = [
  "get-roots-list", "trigger-elicitation-request", "trigger-url-elicitation", "trigger-sampling-request",
];
const EVERYTHING_TOOLS = [...EVERYTHING_BASE_TOOLS, ...EVERYTHING_CONDITIONAL_TOOLS];
const EVERYTHING_PROMPTS = ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"];
const EVERYTHING_TEMPLATES = [
  "demo://resource/dynamic/text/{resourceId}",
  "demo://resource/dynamic/blob/{resourceId}",
];
const FS_TOOLS = [
  "read_file", "read_text_file", "read_media_file", "read_multiple_files", "write_file", "edit_file",
  "create_directory", "list_directory", "list_directory_with_sizes", "directory_tree", "move_file",
  "search_files", "get_file_info", "list_allowed_directories",
];
const EXPECTED_TOOLS = { everything: EVERYTHING_TOOLS, fs: FS_TOOLS };

const SAMPLE_REPLY = "interop sample reply";
const SAMPLE_MODEL = "interop-model";
const ELICIT_NAME = "Interop Tester";
const ELICIT_EMAIL = "interop@example.com";

// ---------------------------------------------------------------------------------------------
// Options

function parseList(v) {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return v.map(String).filter(Boolean);
  return String(v).split(",").map((s) => s.trim()).filter(Boolean);
}

function parseOptions(argv) {
  const fromJson = (src, what) => {
    if (!src) return {};
    try {
      const o = JSON.parse(src);
      if (!o || typeof o !== "object" || Array.isArray(o)) throw new Error("not an object");
      return o;
    } catch (e) {
      usage(`invalid JSON in ${what}: ${e.message}`);
    }
  };
  const { values: cli, rest } = parseArgs(argv, {
    "--servers": "servers", "--prefix-everything": "prefixEverything", "--prefix-fs": "prefixFs", "--sep": "sep",
    "--only": "only", "--skip": "skip", "--root": "root", "--timeout": "timeout", "--no-reference": ["reference", false],
    "--lenient-startup-list-changed": ["lenientStartupListChanged", true], "--verbose": ["verbose", true],
    "--spec": "spec", "--print-config": ["printConfig", true], "--fs-dir": "fsDir",
  }, usage);
  const specArg = cli.spec;
  delete cli.spec;
  const o = { ...fromJson(process.env.INTEROP_SPEC, "INTEROP_SPEC"), ...fromJson(specArg, "--spec"), ...cli };
  if (rest && rest.length) { o.command = rest[0]; o.args = rest.slice(1); }
  o.servers = parseList(o.servers) ?? ["everything", "fs"];
  for (const s of o.servers) if (!(s in EXPECTED_TOOLS)) usage(`unknown server ${s} (known: everything, fs)`);
  o.prefix = { everything: o.prefixEverything ?? "", fs: o.prefixFs ?? "" };
  o.only = parseList(o.only);
  o.skip = parseList(o.skip) ?? [];
  o.timeout = Number(o.timeout ?? 10000);
  if (!Number.isFinite(o.timeout) || o.timeout <= 0) usage("bad --timeout");
  o.reference = o.reference !== false;
  o.args = (o.args ?? []).map(String);
  if (!o.printConfig) {
    if (!o.command) usage("no command given (put it after --)");
    if (o.servers.length > 1) {
      const ps = o.servers.map((s) => o.prefix[s]);
      if (ps.some((p) => p === "")) usage("with more than one server every server needs a non-empty prefix");
      if (new Set(ps).size !== ps.length) usage("prefixes must be distinct");
    }
    if (o.sep !== undefined) {
      for (const s of o.servers) {
        if (o.prefix[s] !== "" && !o.prefix[s].endsWith(o.sep)) usage(`prefix "${o.prefix[s]}" does not end with separator "${o.sep}"`);
      }
    }
  }
  return o;
}

const usage = usageOf(import.meta.url);

// ---------------------------------------------------------------------------------------------
// Small helpers

function canon(v) {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) if (v[k] !== undefined) o[k] = canon(v[k]);
    return o;
  }
  return v;
}
function errInfo(e) {
  return { code: e?.code, message: e?.message, data: e?.data };
}
function rand() { return Math.random().toString(36).slice(2, 10); }

// Fill an elicitation form from its requestedSchema (defaults first, then by type/format).
function fillForm(schema) {
  const out = {};
  for (const [k, p] of Object.entries(schema?.properties ?? {})) {
    if (k === "name") { out[k] = ELICIT_NAME; continue; }
    if (p.default !== undefined) { out[k] = p.default; continue; }
    switch (p.type) {
      case "string":
        if (p.enum) out[k] = p.enum[0];
        else if (p.oneOf) out[k] = p.oneOf[0].const;
        else if (p.format === "email") out[k] = ELICIT_EMAIL;
        else if (p.format === "uri") out[k] = "https://example.com/interop";
        else if (p.format === "date") out[k] = "2000-01-02";
        else if (p.format === "date-time") out[k] = "2000-01-02T03:04:05Z";
        else out[k] = "interop";
        break;
      case "integer": out[k] = Math.ceil(p.minimum ?? 1); break;
      case "number": out[k] = p.minimum ?? 1; break;
      case "boolean": out[k] = true; break;
      case "array": {
        const it = p.items ?? {};
        const first = it.enum?.[0] ?? it.anyOf?.[0]?.const ?? it.oneOf?.[0]?.const ?? "interop";
        out[k] = [first];
        break;
      }
      default: break;
    }
  }
  return out;
}

// Descendant pids of pid (Linux /proc only; empty elsewhere).
function descendants(pid) {
  let entries;
  try { entries = fs.readdirSync("/proc"); } catch { return []; }
  const children = new Map();
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(e));
    } catch { /* gone */ }
  }
  const out = [];
  const stack = [pid];
  while (stack.length) {
    for (const c of children.get(stack.pop()) ?? []) { out.push(c); stack.push(c); }
  }
  return out;
}
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch { return false; }
  try { // zombies count as dead
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch { return true; }
}

// ---------------------------------------------------------------------------------------------
// Client construction

const CLIENT_CAPABILITIES = {
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};

// One connection: SDK client + recorded traffic.
class Conn {
  constructor(label, command, args, opts) {
    this.label = label;
    this.opts = opts;
    this.events = []; // {seq, t, method, params}
    this.waiters = new Waiters();
    this.errors = []; // client.onerror
    this.sampling = []; // received sampling/createMessage params
    this.elicitations = []; // received elicitation/create params
    this.rootsRequests = 0;
    this.initializeResult = undefined;
    this.raw = []; // inbound progress notifications and responses, in wire order
    this.client = new Client({ name: "mcp-simple-aggregator-interop", version: "1.0.0" }, { capabilities: CLIENT_CAPABILITIES });
    this.transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
    this.tap();
    this.installHandlers();
  }

  // Snoop raw inbound JSON-RPC messages (to see the initialize result).
  tap() {
    tapTransport(this.transport, {
      onReceive: (msg) => {
        if (msg?.method === "notifications/progress") this.raw.push({ progress: msg.params?.progress, token: msg.params?.progressToken });
        else if (msg && msg.id !== undefined && !msg.method) this.raw.push({ response: msg.id });
        if (msg && "result" in msg && msg.result && typeof msg.result === "object" && "protocolVersion" in msg.result && this.initializeResult === undefined) {
          this.initializeResult = msg.result;
        }
      },
    });
  }

  record(method, params) {
    const ev = { seq: this.events.length, t: Date.now(), method, params };
    this.events.push(ev);
    if (this.opts.verbose && this.label === "main") console.log(`# <- ${method} ${short(params, 300)}`);
    this.waiters.wake();
  }

  mark() { return this.events.length; }

  // Wait for a recorded notification with seq >= from matching pred.
  waitFor(pred, from, ms, what) {
    return this.waiters.until(() => this.events.find((e) => e.seq >= from && pred(e)), ms, `no ${what} within ${ms} ms`);
  }

  installHandlers() {
    const c = this.client;
    this.roots = [];
    c.onerror = (e) => {
      if (this.closing) return; // e.g. "Not connected" for a server request racing with close
      this.errors.push(String(e?.message ?? e));
      if (this.label === "main") console.log(`# client error: ${short(String(e?.message ?? e), 400)}`);
    };
    c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const params = req.params;
      this.sampling.push(params);
      const first = params.messages?.[0]?.content;
      const firstText = first && !Array.isArray(first) && first.type === "text" ? first.text : "";
      await sleep(Math.floor(Math.random() * 40)); // let concurrent requests interleave
      return {
        role: "assistant",
        content: { type: "text", text: `${SAMPLE_REPLY} [${firstText}]` },
        model: SAMPLE_MODEL,
        stopReason: "endTurn",
      };
    });
    c.setRequestHandler(ElicitRequestSchema, async (req) => {
      const params = req.params;
      this.elicitations.push(params);
      if (params.mode === "url") return { action: "accept" };
      return { action: "accept", content: fillForm(params.requestedSchema) };
    });
    c.setRequestHandler(ListRootsRequestSchema, async () => {
      this.rootsRequests++;
      return { roots: this.roots };
    });
    const rec = (schema) => c.setNotificationHandler(schema, (n) => this.record(n.method, n.params));
    rec(LoggingMessageNotificationSchema);
    rec(ResourceUpdatedNotificationSchema);
    rec(ResourceListChangedNotificationSchema);
    rec(ToolListChangedNotificationSchema);
    rec(PromptListChangedNotificationSchema);
    c.fallbackNotificationHandler = async (n) => this.record(n.method, n.params);
  }

  async connect(ms) {
    this.connectStart = this.mark();
    await withTimeout(this.client.connect(this.transport, { timeout: ms }), ms, "initialize");
  }

  async close() {
    this.closing = true;
    try { await this.client.close(); } catch { /* ignore */ }
  }
}

// ---------------------------------------------------------------------------------------------
// The run

async function main() {
  const opts = parseOptions(process.argv.slice(2));

  if (opts.printConfig) {
    const cfg = {
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING_ENTRY, "stdio"], env: {} },
        fs: { command: process.execPath, args: [FS_ENTRY, path.resolve(opts.fsDir ?? os.tmpdir())], env: {} },
      },
    };
    console.log(JSON.stringify(cfg, null, 2));
    return 0;
  }

  const T = opts.timeout;
  const has = (s) => opts.servers.includes(s);
  const P = opts.prefix;
  const E = (name) => P.everything + name; // exposed name of a server-everything tool/prompt
  const F = (name) => P.fs + name;

  // Roots
  let createdRoot = null;
  let rootDir;
  if (opts.root) {
    rootDir = path.resolve(opts.root);
    fs.mkdirSync(rootDir, { recursive: true });
  } else {
    rootDir = createdRoot = fs.mkdtempSync(path.join(os.tmpdir(), "interop-root-"));
  }
  rootDir = fs.realpathSync(rootDir);
  const rootUri = pathToFileURL(rootDir).href;
  const root2Dir = fs.mkdtempSync(path.join(os.tmpdir(), "interop-root2-"));
  const root2 = fs.realpathSync(root2Dir);
  const root2Uri = pathToFileURL(root2).href;

  let passed = 0, failed = 0;
  const report = (line) => { console.log(line); };

  const main = new Conn("main", opts.command, opts.args, opts);
  main.roots = [{ uri: rootUri, name: "interop-root" }];

  // Reference: a directly spawned server-everything, started lazily.
  let ref = null;
  let refFailed = null;
  const getRef = async () => {
    if (!opts.reference || !has("everything")) return null;
    if (ref) return ref;
    if (refFailed) throw refFailed;
    const r = new Conn("reference", process.execPath, [EVERYTHING_ENTRY, "stdio"], opts);
    r.roots = main.roots;
    try {
      await r.connect(T);
      await r.client.listTools({}, { timeout: T }); // populates output-schema validators
    } catch (e) {
      refFailed = new Error(`reference server-everything failed to start: ${e.message}`);
      throw refFailed;
    }
    ref = r;
    return ref;
  };

  const c = main.client;
  const ro = () => ({ timeout: T }); // request options

  // Tool helpers
  const call = (name, args = {}, extra = {}) => c.callTool({ name, arguments: args }, undefined, { ...ro(), ...extra });
  const callOk = async (name, args = {}, extra = {}) => {
    const r = await call(name, args, extra);
    assert(!r.isError, `${name} returned isError: ${short(textOf(r) || r)}`);
    return r;
  };
  const listAll = async (method, key) => {
    const out = [];
    let cursor;
    const seen = new Set();
    for (let page = 0; page < 100; page++) {
      const r = await c[method](cursor === undefined ? {} : { cursor }, ro());
      out.push(...(r[key] ?? []));
      cursor = r.nextCursor;
      if (cursor === undefined || cursor === null) return { items: out, pages: page + 1 };
      assert(!seen.has(cursor), `${method}: cursor ${short(cursor)} repeated`);
      seen.add(cursor);
    }
    throw new CheckError(`${method}: more than 100 pages`);
  };

  let toolsCache = null;
  const state = {}; // shared between cases

  const cases = [];
  const add = (name, needs, fn) => cases.push({ name, needs, fn });
  const needAll = (...s) => () => { const m = s.filter((x) => !has(x)); return m.length ? `server ${m.join(", ")} not under test` : null; };
  const needAny = (...s) => () => (s.some(has) ? null : `none of ${s.join(", ")} under test`);
  const EV = needAll("everything");

  let connected = false;

  // ---- initialize
  add("initialize", null, async () => {
    await main.connect(T);
    connected = true;
    const ir = main.initializeResult;
    assert(ir, "initialize result not seen");
    assert(ir.protocolVersion === LATEST_PROTOCOL_VERSION, `protocolVersion ${ir.protocolVersion}, want ${LATEST_PROTOCOL_VERSION}`);
    const sv = c.getServerVersion();
    assert(sv && sv.name && sv.version, `bad serverInfo ${short(sv)}`);
    const caps = c.getServerCapabilities() ?? {};
    console.log(`# server ${short(sv)} capabilities ${short(caps, 400)}`);
    assert(caps.tools, "no tools capability");
    if (has("everything")) {
      assert(caps.tools.listChanged, "tools.listChanged not declared");
      assert(caps.prompts, "no prompts capability");
      assert(caps.resources, "no resources capability");
      assert(caps.resources.subscribe, "resources.subscribe not declared");
      assert(caps.logging, "no logging capability");
      assert(caps.completions, "no completions capability");
    }
  });

  // ---- ping
  add("ping", null, async () => {
    const r = await c.ping(ro());
    assert(r && typeof r === "object", `bad ping result ${short(r)}`);
  });

  // ---- list
  const checkToolNames = (tools) => {
    const problems = [];
    const per = Object.fromEntries(opts.servers.map((s) => [s, []]));
    const prefixes = opts.servers.map((s) => [s, P[s]]).sort((a, b) => b[1].length - a[1].length);
    const names = new Set();
    const few = (l) => (l.length > 4 ? `${l.slice(0, 4).join(", ")} and ${l.length - 4} more` : l.join(", "));
    const unprefixed = [];
    for (const t of tools) {
      if (names.has(t.name)) problems.push(`duplicate tool ${t.name}`);
      names.add(t.name);
      const m = prefixes.find(([, p]) => t.name.startsWith(p));
      if (!m) { unprefixed.push(t.name); continue; }
      per[m[0]].push(t.name.slice(m[1].length));
    }
    if (unprefixed.length) problems.push(`${unprefixed.length} tool(s) without any of the prefixes ${short(prefixes.map((x) => x[1]))}: ${few(unprefixed)}`);
    for (const s of opts.servers) {
      const got = new Set(per[s]);
      const missing = EXPECTED_TOOLS[s].filter((n) => !got.has(n)).map((n) => P[s] + n);
      const extra = per[s].filter((n) => !EXPECTED_TOOLS[s].includes(n)).map((n) => P[s] + n);
      if (missing.length) problems.push(`${s}: ${missing.length} missing: ${few(missing)}`);
      if (extra.length) problems.push(`${s}: ${extra.length} unexpected: ${few(extra)}`);
    }
    return problems;
  };
  add("list", null, async () => {
    let { items, pages } = await listAll("listTools", "tools");
    let problems = checkToolNames(items);
    if (problems.length && has("everything")) {
      // server-everything registers its capability-dependent tools after initialization (and
      // announces them with notifications/tools/list_changed); a real client re-lists, so poll.
      console.log(`# list: first tools/list incomplete (${problems.join("; ")}), re-listing`);
      const deadline = Date.now() + T / 2;
      while (problems.length && Date.now() < deadline) {
        await sleep(250);
        ({ items, pages } = await listAll("listTools", "tools"));
        problems = checkToolNames(items);
      }
    }
    assert(!problems.length, problems.join("; "));
    toolsCache = items;
    const bad = items.filter((t) => !/^[A-Za-z0-9_.-]{1,128}$/.test(t.name)).map((t) => t.name);
    if (bad.length) console.log(`# note: ${bad.length} tool name(s) outside the [A-Za-z0-9_.-]{1,128} recommendation of MCP 2025-11-25, e.g. ${bad[0]}`);
    console.log(`# list: ${items.length} tools in ${pages} page(s)`);
  });

  // ---- tool-definitions: every server-everything tool definition equals the direct one (except name)
  add("tool-definitions", EV, async () => {
    const r = await getRef();
    if (!r) return "skip: reference disabled";
    const refTools = (await r.client.listTools({}, ro())).tools;
    const tools = toolsCache ?? (await listAll("listTools", "tools")).items;
    for (const rt of refTools) {
      const t = tools.find((x) => x.name === E(rt.name));
      assert(t, `missing ${E(rt.name)}`);
      const d = diff(canon({ ...t, name: rt.name }), canon(rt));
      assert(!d, `${t.name} differs from direct definition: ${d}`);
    }
  });

  // ---- tools-list-changed: server-everything registers its capability-dependent tools right
  // after notifications/initialized and thereby emits notifications/tools/list_changed.
  add("tools-list-changed", EV, async () => {
    try {
      await main.waitFor((e) => e.method === "notifications/tools/list_changed", main.connectStart, Math.min(3000, T), "notifications/tools/list_changed since connect");
    } catch (e) {
      if (opts.lenientStartupListChanged) return `skip: ${e.message} (server-everything changes its tool list only during initialization)`;
      throw e;
    }
  });

  // ---- call
  add("call", EV, async () => {
    const r = await getRef().catch(() => null);
    const cases = [
      ["echo", { message: "hello interop ✓" }, (res) => textOf(res) === "Echo: hello interop ✓"],
      ["get-sum", { a: 40, b: 2.5 }, (res) => textOf(res) === "The sum of 40 and 2.5 is 42.5."],
      ["get-structured-content", { location: "Chicago" }, (res) => res.structuredContent?.temperature === 36 && res.structuredContent?.conditions === "Light rain / drizzle"],
      ["get-tiny-image", {}, (res) => res.content?.some((x) => x.type === "image" && x.mimeType === "image/png" && x.data.length > 100)],
      ["get-annotated-message", { messageType: "error", includeImage: true }, (res) => res.content?.[0]?.annotations?.priority === 1 && res.content?.[1]?.type === "image"],
      ["get-resource-links", { count: 3 }, (res) => res.content?.filter((x) => x.type === "resource_link").length === 3],
    ];
    for (const [name, args, ok] of cases) {
      const res = await callOk(E(name), args);
      assert(ok(res), `${E(name)} unexpected result ${short(res, 300)}`);
      if (r) {
        const want = await r.client.callTool({ name, arguments: args }, undefined, ro());
        const d = diff(canon(res), canon(want));
        assert(!d, `${E(name)} result differs from direct connection: ${d}`);
      }
    }
  });

  // ---- errors
  add("errors", EV, async () => {
    const r = await getRef().catch(() => null);
    const outcome = async (conn, name, args) => {
      try {
        const res = await conn.client.callTool({ name, arguments: args }, undefined, ro());
        return { result: res };
      } catch (e) {
        return { error: errInfo(e) };
      }
    };
    // invalid arguments: server-everything answers with an isError result (-32602 text inside)
    for (const [name, args] of [["get-sum", { a: "x", b: 2 }], ["echo", {}]]) {
      const got = await outcome(main, E(name), args);
      assert(got.result?.isError === true || got.error, `${E(name)} with invalid args did not fail: ${short(got)}`);
      if (got.result) assert(/Input validation error/.test(textOf(got.result)), `${E(name)}: unexpected error text ${short(textOf(got.result))}`);
      if (r) {
        const want = await outcome(r, name, args);
        const d = diff(canon(got), canon(want));
        assert(!d, `${E(name)} invalid-args outcome differs from direct connection: ${d} (got ${short(got, 300)})`);
      }
    }
    // unknown tools: any error (JSON-RPC error or isError result) is fine
    for (const name of [E("no-such-tool"), "interop-unprefixed-no-such-tool"]) {
      const got = await outcome(main, name, {});
      assert(got.error || got.result?.isError === true, `unknown tool ${name} did not fail: ${short(got)}`);
      console.log(`# errors: unknown tool ${name} -> ${short(got, 200)}`);
    }
  });

  // ---- error-data: a JSON-RPC error with data (-32042 URL elicitation required) passes unchanged
  add("error-data", EV, async () => {
    const args = { url: `https://example.com/interop-error-${rand()}`, errorPath: true };
    const grab = async (conn, name) => {
      try {
        const res = await conn.client.callTool({ name, arguments: args }, undefined, ro());
        return { result: res };
      } catch (e) { return { error: errInfo(e) }; }
    };
    const got = await grab(main, E("trigger-url-elicitation"));
    assert(got.error, `expected a JSON-RPC error, got ${short(got)}`);
    assert(got.error.code === -32042, `code ${got.error.code}, want -32042 (${got.error.message})`);
    const el = got.error.data?.elicitations?.[0];
    assert(el && el.mode === "url" && el.url === "https://modelcontextprotocol.io" && el.elicitationId, `bad error data ${short(got.error.data)}`);
    const r = await getRef().catch(() => null);
    if (r) {
      const want = await grab(r, "trigger-url-elicitation");
      const norm = (x) => ({ code: x.error?.code, message: x.error?.message, elicitation: { ...(x.error?.data?.elicitations?.[0] ?? {}), elicitationId: "*" } });
      const d = diff(canon(norm(got)), canon(norm(want)));
      assert(!d, `error differs from direct connection: ${d}`);
    }
    // retry of the same call now takes the request path (elicitation/create in url mode)
    const n = main.elicitations.length;
    const res = await callOk(E("trigger-url-elicitation"), args);
    assert(/completed the URL elicitation/.test(textOf(res)), `retry: unexpected result ${short(textOf(res))}`);
    assert(main.elicitations.length === n + 1, "retry did not reach our elicitation handler");
  });

  // ---- concurrent: interleaved calls (and server->client requests) are matched correctly
  add("concurrent", EV, async () => {
    const jobs = [];
    for (let i = 0; i < 12; i++) {
      jobs.push(callOk(E("echo"), { message: `m${i}` }).then((res) => assert(textOf(res) === `Echo: m${i}`, `echo ${i} got ${short(textOf(res))}`)));
      jobs.push(callOk(E("get-sum"), { a: i, b: 1000 }).then((res) => assert(textOf(res) === `The sum of ${i} and 1000 is ${i + 1000}.`, `sum ${i} got ${short(textOf(res))}`)));
    }
    for (let i = 0; i < 3; i++) {
      const prompt = `concurrent-${i}-${rand()}`;
      jobs.push(callOk(E("trigger-sampling-request"), { prompt, maxTokens: 10 + i }).then((res) => {
        assert(textOf(res).includes(`${SAMPLE_REPLY} [Resource trigger-sampling-request context: ${prompt}]`), `sampling ${i} got ${short(textOf(res), 300)}`);
      }));
    }
    if (has("fs")) jobs.push(callOk(F("list_allowed_directories"), {}));
    jobs.push(c.ping(ro()));
    const settled = await Promise.allSettled(jobs);
    const bad = settled.filter((s) => s.status === "rejected");
    assert(!bad.length, `${bad.length}/${jobs.length} failed, first: ${bad[0]?.reason?.message}`);
  });

  // ---- fs
  add("fs", needAll("fs"), async () => {
    // server-filesystem replaces its allowed directories with the client's roots after initialization.
    let text = "";
    const deadline = Date.now() + T / 2;
    for (;;) {
      const res = await callOk(F("list_allowed_directories"), {});
      text = textOf(res);
      if (text.split("\n").includes(rootDir)) break;
      if (Date.now() > deadline) throw new CheckError(`our root ${rootDir} never appeared in allowed directories: ${short(text)}`);
      await sleep(100);
    }
    const file = path.join(rootDir, `interop-${rand()}.txt`);
    const content = `interop file content ${rand()}\nsecond line ✓\n`;
    const w = await callOk(F("write_file"), { path: file, content });
    assert(textOf(w).includes("Successfully wrote"), `write_file: ${short(textOf(w))}`);
    assert(fs.readFileSync(file, "utf8") === content, "file on disk has wrong content");
    const rd = await callOk(F("read_text_file"), { path: file });
    assert(textOf(rd) === content, `read_text_file returned ${short(textOf(rd))}`);
    assert(rd.structuredContent?.content === content, `read_text_file structuredContent ${short(rd.structuredContent)}`);
    const ls = await callOk(F("list_directory"), { path: rootDir });
    assert(textOf(ls).includes(`[FILE] ${path.basename(file)}`), `list_directory: ${short(textOf(ls))}`);
    const denied = await call(F("read_text_file"), { path: "/etc/hostname" });
    assert(denied.isError === true && /Access denied/.test(textOf(denied)), `reading outside the root did not fail: ${short(denied)}`);
  });

  // ---- sampling
  add("sampling", EV, async () => {
    const prompt = `interop-prompt-${rand()}`;
    const n = main.sampling.length;
    const res = await callOk(E("trigger-sampling-request"), { prompt, maxTokens: 33 });
    const got = main.sampling.slice(n);
    assert(got.length === 1, `our sampling handler was called ${got.length} times`);
    const p = got[0];
    assert(p.messages?.[0]?.content?.text === `Resource trigger-sampling-request context: ${prompt}`, `sampling request messages ${short(p.messages)}`);
    assert(p.maxTokens === 33 && p.systemPrompt === "You are a helpful test server." && p.temperature === 0.7, `sampling request params ${short(p)}`);
    const t = textOf(res);
    assert(t.includes(SAMPLE_REPLY) && t.includes(SAMPLE_MODEL), `tool result does not contain our reply: ${short(t, 300)}`);
  });

  // ---- elicitation (form mode)
  add("elicitation", EV, async () => {
    const n = main.elicitations.length;
    const res = await callOk(E("trigger-elicitation-request"), {});
    const got = main.elicitations.slice(n);
    assert(got.length === 1, `our elicitation handler was called ${got.length} times`);
    assert(got[0].message === "Please provide inputs for the following fields:" && got[0].requestedSchema?.properties?.name, `elicitation params ${short(got[0])}`);
    const t = textOf(res);
    assert(t.includes(`- Name: ${ELICIT_NAME}`) && t.includes(`- Email: ${ELICIT_EMAIL}`) && t.includes("\"action\": \"accept\""), `tool result does not reflect our answer: ${short(t, 300)}`);
  });

  // ---- elicitation-url (url mode, request path)
  add("elicitation-url", EV, async () => {
    const url = `https://example.com/interop-url-${rand()}`;
    const n = main.elicitations.length;
    const res = await callOk(E("trigger-url-elicitation"), { url, message: "interop url elicitation" });
    const got = main.elicitations.slice(n);
    assert(got.length === 1, `our elicitation handler was called ${got.length} times`);
    assert(got[0].mode === "url" && got[0].url === url && got[0].message === "interop url elicitation" && got[0].elicitationId, `url elicitation params ${short(got[0])}`);
    assert(textOf(res).includes("completed the URL elicitation") && textOf(res).includes(url), `tool result ${short(textOf(res), 300)}`);
  });

  // ---- roots
  add("roots", EV, async () => {
    const res = await callOk(E("get-roots-list"), {});
    const t = textOf(res);
    assert(t.includes("(1 total)") && t.includes(`URI: ${rootUri}`) && t.includes("interop-root"), `roots tool result: ${short(t, 300)}`);
    assert(main.rootsRequests >= 1, "our roots/list handler was never called");
  });

  // ---- log-on-init: server-everything logs "Roots updated: ..." by itself after fetching roots
  add("log-on-init", EV, async () => {
    await main.waitFor((e) => e.method === "notifications/message" && /Roots updated: 1 root\(s\) received from client/.test(String(e.params?.data)), main.connectStart, Math.min(3000, T), "notifications/message 'Roots updated: 1 root(s)'");
  });

  // ---- progress
  add("progress", EV, async () => {
    const seen = [];
    const errs = main.errors.length;
    const rawFrom = main.raw.length;
    const res = await callOk(E("trigger-long-running-operation"), { duration: 1.2, steps: 4 }, { onprogress: (p) => seen.push(p) });
    assert(textOf(res) === "Long running operation completed. Duration: 1.2 seconds, Steps: 4.", `result ${short(textOf(res))}`);
    // wire order: all four progress notifications precede the response
    const raw = main.raw.slice(rawFrom);
    const prog = raw.filter((r) => "progress" in r);
    assert(prog.length === 4, `${prog.length} progress notifications on the wire, want 4`);
    const token = prog[0].token;
    assert(prog.every((r) => r.token === token), `mixed progress tokens ${short(prog)}`);
    const respAt = raw.findIndex((r) => r.response === token);
    const lastProg = raw.map((r) => r.token === token && "progress" in r).lastIndexOf(true);
    assert(respAt > lastProg, `response arrived before progress notification(s): ${short(raw)}`);
    seen.forEach((p, i) => assert(p.progress === i + 1 && p.total === 4, `progress #${i}: ${short(p)}`));
    if (seen.length === 3) {
      // The SDK client dispatches notifications one microtask later than responses, so the final
      // progress notification is dropped ("unknown token") when it arrives in the same read
      // chunk as the response. Tolerate exactly that.
      await sleep(50);
      const i = main.errors.findIndex((m, k) => k >= errs && /progress notification for an unknown token/.test(m) && /"progress":4,"total":4/.test(m));
      assert(i >= 0, `got 3 progress notifications, want 4: ${short(seen)}`);
      main.errors.splice(i, 1);
      console.log("# progress: final notification arrived together with the response and was dropped by the SDK client (tolerated)");
    } else {
      assert(seen.length === 4, `got ${seen.length} progress notifications, want 4: ${short(seen)}`);
    }
  });

  // ---- cancellation
  add("cancellation", EV, async () => {
    const errs = main.errors.length;
    const ac = new AbortController();
    const started = Date.now();
    const p = call(E("trigger-long-running-operation"), { duration: 2.4, steps: 3 }, { signal: ac.signal });
    await sleep(500);
    ac.abort("interop-cancel");
    const outcome = await withTimeout(p.then((res) => ({ res }), (err) => ({ err })), 2000, "rejection of the aborted call");
    assert(outcome.err, `aborted call resolved: ${short(outcome.res)}`);
    const res = await callOk(E("echo"), { message: "after cancel" });
    assert(textOf(res) === "Echo: after cancel", `echo after cancel: ${short(textOf(res))}`);
    // The server finishes its (uncancellable) work after ~2.4 s; no response may reach us for the
    // cancelled request (the SDK would report "unknown message ID").
    await sleep(Math.max(0, started + 3000 - Date.now()));
    const late = main.errors.slice(errs).filter((m) => /unknown message ID/.test(m));
    assert(!late.length, `response to the cancelled request arrived: ${short(late[0], 300)}`);
  });

  // ---- resources
  add("resources", EV, async () => {
    const docs = fs.readdirSync(EVERYTHING_DOCS).filter((f) => fs.statSync(path.join(EVERYTHING_DOCS, f)).isFile());
    const { items, pages } = await listAll("listResources", "resources");
    console.log(`# resources: ${items.length} resources in ${pages} page(s)`);
    for (const f of docs) {
      const uri = `demo://resource/static/document/${encodeURIComponent(f)}`;
      assert(items.some((r) => r.uri === uri), `resources/list lacks ${uri}`);
    }
    const r = await getRef().catch(() => null);
    if (r) {
      for (const want of (await r.client.listResources({}, ro())).resources) {
        const got = items.find((x) => x.uri === want.uri);
        assert(got, `resources/list lacks ${want.uri}`);
        const d = diff(canon(got), canon(want));
        assert(!d, `${want.uri} differs from direct listing: ${d}`);
      }
    }
    const tpl = await listAll("listResourceTemplates", "resourceTemplates");
    for (const u of EVERYTHING_TEMPLATES) assert(tpl.items.some((t) => t.uriTemplate === u), `resources/templates/list lacks ${u}`);
    // read a listed resource
    const uri = "demo://resource/static/document/features.md";
    const rd = await c.readResource({ uri }, ro());
    assert(rd.contents?.[0]?.uri === uri && rd.contents[0].mimeType === "text/markdown", `read ${uri}: ${short(rd)}`);
    assert(rd.contents[0].text === fs.readFileSync(path.join(EVERYTHING_DOCS, "features.md"), "utf8"), `read ${uri}: wrong text`);
    // read resources made from the templates
    const t7 = await c.readResource({ uri: "demo://resource/dynamic/text/7" }, ro());
    assert(/^Resource 7: This is a plaintext resource created at /.test(t7.contents?.[0]?.text ?? ""), `read text/7: ${short(t7)}`);
    const b8 = await c.readResource({ uri: "demo://resource/dynamic/blob/8" }, ro());
    assert(/^Resource 8: This is a base64 blob created at /.test(Buffer.from(b8.contents?.[0]?.blob ?? "", "base64").toString()), `read blob/8: ${short(b8)}`);
    // unknown resource -> error
    let err = null;
    try { await c.readResource({ uri: "demo://resource/interop-no-such" }, ro()); } catch (e) { err = e; }
    assert(err, "reading an unknown resource did not fail");
    console.log(`# resources: unknown uri -> ${short(errInfo(err))}`);
  });

  // ---- subscribe
  add("subscribe", EV, async () => {
    const uri = "demo://resource/static/document/features.md";
    await c.subscribeResource({ uri }, ro());
    const from = main.mark();
    const on = await callOk(E("toggle-subscriber-updates"), {});
    assert(/^Started simulated resource updated/.test(textOf(on)), `toggle on: ${short(textOf(on))}`);
    try {
      await main.waitFor((e) => e.method === "notifications/resources/updated" && e.params?.uri === uri, from, T / 2, `notifications/resources/updated for ${uri}`);
    } finally {
      const off = await callOk(E("toggle-subscriber-updates"), {});
      assert(/^Stopped simulated resource updates/.test(textOf(off)), `toggle off: ${short(textOf(off))}`);
      await c.unsubscribeResource({ uri }, ro());
    }
  });

  // ---- resources-list-changed: gzip-file-as-resource registers a new resource
  add("resources-list-changed", EV, async () => {
    const name = `interop-${rand()}.txt.gz`;
    const plain = `interop gzip payload ${rand()}`;
    const data = `data:text/plain;base64,${Buffer.from(plain).toString("base64")}`;
    const from = main.mark();
    const res = await callOk(E("gzip-file-as-resource"), { name, data, outputType: "resourceLink" });
    const uri = `demo://resource/session/${name}`;
    assert(res.content?.some((x) => x.type === "resource_link" && x.uri === uri), `tool result ${short(res, 300)}`);
    await main.waitFor((e) => e.method === "notifications/resources/list_changed", from, T / 2, "notifications/resources/list_changed");
    const { items } = await listAll("listResources", "resources");
    assert(items.some((r) => r.uri === uri), `new resource ${uri} not in resources/list`);
    const rd = await c.readResource({ uri }, ro());
    const blob = rd.contents?.[0]?.blob;
    assert(blob && zlib.gunzipSync(Buffer.from(blob, "base64")).toString() === plain, `read ${uri}: ${short(rd)}`);
  });

  // ---- prompts
  add("prompts", EV, async () => {
    const { items } = await listAll("listPrompts", "prompts");
    const ours = items.filter((p) => p.name.startsWith(P.everything)).map((p) => p.name.slice(P.everything.length));
    for (const n of EVERYTHING_PROMPTS) assert(ours.includes(n), `prompts/list lacks ${E(n)} (got ${short(items.map((p) => p.name))})`);
    const extra = ours.filter((n) => !EVERYTHING_PROMPTS.includes(n));
    assert(!extra.length, `unexpected prompts ${extra.map(E).join(", ")}`);
    const r = await getRef().catch(() => null);
    if (r) {
      for (const want of (await r.client.listPrompts({}, ro())).prompts) {
        const got = items.find((x) => x.name === E(want.name));
        const d = diff(canon({ ...got, name: want.name }), canon(want));
        assert(!d, `${E(want.name)} differs from direct definition: ${d}`);
      }
    }
    const simple = await c.getPrompt({ name: E("simple-prompt") }, ro());
    assert(simple.messages?.[0]?.content?.text === "This is a simple prompt without arguments.", `simple-prompt: ${short(simple)}`);
    const args = await c.getPrompt({ name: E("args-prompt"), arguments: { city: "Berlin", state: "BE" } }, ro());
    assert(args.messages?.[0]?.content?.text === "What's weather in Berlin, BE?", `args-prompt: ${short(args)}`);
    const resP = await c.getPrompt({ name: E("resource-prompt"), arguments: { resourceType: "Text", resourceId: "3" } }, ro());
    assert(resP.messages?.[1]?.content?.type === "resource" && resP.messages[1].content.resource?.uri === "demo://resource/dynamic/text/3", `resource-prompt: ${short(resP, 300)}`);
    let err = null;
    try { await c.getPrompt({ name: E("interop-no-such-prompt") }, ro()); } catch (e) { err = e; }
    assert(err, "prompts/get of an unknown prompt did not fail");
  });

  // ---- completion
  add("completion", EV, async () => {
    const comp = async (ref, argument, context) => (await c.complete(context ? { ref, argument, context } : { ref, argument }, ro())).completion;
    const pref = { type: "ref/prompt", name: E("completable-prompt") };
    let cm = await comp(pref, { name: "department", value: "En" });
    assert(diff(cm.values, ["Engineering"]) === undefined, `department 'En' -> ${short(cm)}`);
    cm = await comp(pref, { name: "name", value: "" }, { arguments: { department: "Sales" } });
    assert(diff(cm.values, ["David", "Eve", "Frank"]) === undefined, `name with context Sales -> ${short(cm)}`);
    cm = await comp({ type: "ref/prompt", name: E("resource-prompt") }, { name: "resourceType", value: "B" });
    assert(diff(cm.values, ["Blob"]) === undefined, `resourceType 'B' -> ${short(cm)}`);
    cm = await comp({ type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" }, { name: "resourceId", value: "42" });
    assert(diff(cm.values, ["42"]) === undefined, `resource template resourceId '42' -> ${short(cm)}`);
  });

  // ---- logging
  add("logging", EV, async () => {
    await c.setLoggingLevel("debug", ro());
    const from = main.mark();
    const on = await callOk(E("toggle-simulated-logging"), {});
    assert(/^Started simulated, random-leveled logging/.test(textOf(on)), `toggle on: ${short(textOf(on))}`);
    try {
      const ev = await main.waitFor((e) => e.method === "notifications/message" && /level[- ]message/i.test(String(e.params?.data)), from, T / 2, "simulated notifications/message");
      assert(typeof ev.params.level === "string", `bad log message ${short(ev.params)}`);
    } finally {
      const off = await callOk(E("toggle-simulated-logging"), {});
      assert(/^Stopped simulated logging/.test(textOf(off)), `toggle off: ${short(textOf(off))}`);
    }
  });

  // ---- roots-list-changed: client changes its roots and notifies; servers re-fetch them
  add("roots-list-changed", needAny("everything", "fs"), async () => {
    main.roots = [{ uri: rootUri, name: "interop-root" }, { uri: root2Uri, name: "interop-root-2" }];
    const asked = main.rootsRequests;
    await c.sendRootsListChanged();
    const deadline = Date.now() + T / 2;
    const pending = new Set([...(has("everything") ? ["everything"] : []), ...(has("fs") ? ["fs"] : [])]);
    let last = {};
    while (pending.size) {
      if (pending.has("everything")) {
        const t = textOf(await callOk(E("get-roots-list"), {}));
        last.everything = t;
        if (t.includes("(2 total)") && t.includes(`URI: ${root2Uri}`)) pending.delete("everything");
      }
      if (pending.has("fs")) {
        const t = textOf(await callOk(F("list_allowed_directories"), {}));
        last.fs = t;
        if (t.split("\n").includes(root2)) pending.delete("fs");
      }
      if (!pending.size) break;
      if (Date.now() > deadline) throw new CheckError(`roots not refreshed by ${[...pending].join(", ")}: ${short(last, 300)}`);
      await sleep(100);
    }
    assert(main.rootsRequests > asked, "roots/list was not requested again");
  });

  // ---- no-protocol-errors
  add("no-protocol-errors", null, async () => {
    assert(!main.errors.length, `${main.errors.length} client error(s), first: ${short(main.errors[0], 300)}`);
  });

  // ---- shutdown: closing stdin ends the server (and its whole process tree)
  add("shutdown", null, async () => {
    const pid = main.transport.pid;
    assert(pid, "no child pid");
    const tree = descendants(pid);
    const t0 = Date.now();
    await main.close(); // SDK: close stdin, wait 2 s, SIGTERM, wait 2 s, SIGKILL
    connected = false;
    const took = Date.now() - t0;
    console.log(`# shutdown: ${took < 1900 ? `server exited on stdin close after ${took} ms` : `server did not exit on stdin close, SDK sent SIGTERM (close took ${took} ms)`}; ${tree.length} descendant process(es)`);
    const deadline = Date.now() + 3000;
    let left = [pid, ...tree].filter(alive);
    while (left.length && Date.now() < deadline) { await sleep(50); left = left.filter(alive); }
    if (left.length) {
      for (const p of left) { try { process.kill(p, "SIGKILL"); } catch { /* gone */ } }
      throw new CheckError(`process(es) still running 3 s after close: ${left.join(", ")} (killed)`);
    }
  });

  // ---- run
  const selected = (name) => (!opts.only || opts.only.includes(name)) && !opts.skip.includes(name);
  const known = new Set(cases.map((x) => x.name));
  for (const n of [...(opts.only ?? []), ...opts.skip]) if (!known.has(n)) usage(`unknown case ${n}`);

  const watchdog = setTimeout(() => {
    console.log(`not ok watchdog: run exceeded ${cases.length * T + 30000} ms`);
    console.log(`${passed} passed, ${failed + 1} failed`);
    process.exit(1);
  }, cases.length * T + 30000);

  for (const cs of cases) {
    const forced = cs.name === "initialize" || (cs.name === "shutdown" && connected);
    if (!forced && !selected(cs.name)) continue;
    if (cs.name !== "initialize" && cs.name !== "shutdown" && !connected) { report(`skip ${cs.name}: not connected`); continue; }
    if (cs.name === "shutdown" && !connected) continue;
    const why = cs.needs?.();
    if (why) { report(`skip ${cs.name}: ${why}`); continue; }
    try {
      const r = await withTimeout(Promise.resolve().then(cs.fn), cs.name === "cancellation" ? T + 3000 : T, cs.name);
      if (typeof r === "string" && r.startsWith("skip: ")) { report(`skip ${cs.name}: ${r.slice(6)}`); continue; }
      passed++;
      report(`ok ${cs.name}`);
    } catch (e) {
      failed++;
      report(`not ok ${cs.name}: ${String(e?.message ?? e).replace(/\s+/g, " ")}`);
    }
  }

  await main.close(); // also when initialize failed: the child must not outlive us
  if (ref) await ref.close();
  clearTimeout(watchdog);
  if (createdRoot) fs.rmSync(createdRoot, { recursive: true, force: true });
  fs.rmSync(root2Dir, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.log(`not ok internal: ${String(e?.stack ?? e).replace(/\s+/g, " ")}`);
    console.log("0 passed, 1 failed");
    process.exit(1);
  },
);
