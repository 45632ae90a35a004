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

import path from "node:path";
import {
  HERE, Run, WireConn, assert, childInitializeParams, diff, parseCompareOptions, runMain, sameToolEntry, shape,
  short, textOf, usageOf, withTimeout, without,
} from "./lib.mjs";

const EXAMPLE_ENTRY = path.join(HERE, "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const APP_MIME = "text/html;profile=mcp-app";
// extensions is in the SDK's ClientCapabilities (1.32.2); the initialize check sees it is sent.
const CLIENT_CAPABILITIES = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME] } } };
// The example server's surface (server-basic-vanillajs 2.0.3).
const TOOL = "get-time";
const UI_URI = "ui://get-time/mcp-app.html";
// Lists are read to at most this many pages.
const MAX_PAGES = 100;

const usage = usageOf(import.meta.url);

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
function isISOTime(s) {
  return typeof s === "string" && ISO_8601.test(s) && !Number.isNaN(Date.parse(s));
}

// ---------------------------------------------------------------------------------------------
// The run

async function main() {
  const opts = parseCompareOptions(process.argv.slice(2), usage, "apps");
  const T = opts.timeout;
  const P = (name) => opts.key + opts.sep + name;
  const O = (name) => opts.otherKey + opts.sep + name;
  const run = new Run("apps.mjs", opts, 6 * T);
  const { report } = run;
  const check = (name, fn) => run.check(name, fn);

  const conn = (label, command, args) => new WireConn(label, command, args, { timeout: T, clientName: "mcp-simple-aggregator-apps-interop", capabilities: CLIENT_CAPABILITIES });
  const direct = conn("direct", process.execPath, [EXAMPLE_ENTRY, "--stdio"]);
  const agg = conn("aggregator", opts.command, opts.args);

  return run.compare(direct, agg, async () => {
    await check("initialize", async () => {
      for (const c of [direct, agg]) {
        const sentCaps = c.initializeRequest?.params?.capabilities;
        assert(diff(sentCaps?.extensions, CLIENT_CAPABILITIES.extensions) === undefined,
          `${c.label}: the SDK client did not send the extension as declared: capabilities ${short(sentCaps)}`);
      }
      const [d, a] = run.initializeResults(direct, agg, opts.serverName);
      assert(diff(a.serverInfo, d.serverInfo) !== undefined, `aggregator passed the child's serverInfo up: ${short(a.serverInfo)}`);
      assert(a.capabilities && typeof a.capabilities.tools === "object", `aggregator capabilities lack tools: ${short(a.capabilities)}`);
      assert(typeof a.capabilities.resources === "object", `aggregator capabilities lack resources: ${short(a.capabilities)}`);
      assert(typeof d.capabilities?.tools === "object" && typeof d.capabilities?.resources === "object",
        `example server capabilities lack tools/resources: ${short(d.capabilities)}`);
    });

    // tools/list
    await check("tools-list", async () => {
      const dTools = await direct.listTools(MAX_PAGES);
      const aTools = await agg.listTools(MAX_PAGES);
      const [, a] = sameToolEntry(report, dTools, aTools, TOOL, P(TOOL));
      assert(a._meta?.ui?.resourceUri === UI_URI, `_meta.ui.resourceUri ${short(a._meta?.ui?.resourceUri)}, want ${UI_URI}`);
      assert(a._meta?.["ui/resourceUri"] === UI_URI, `_meta["ui/resourceUri"] ${short(a._meta?.["ui/resourceUri"])}, want ${UI_URI}`);
      // Every tool of the example server, and no other, under the key's prefix.
      const want = dTools.map((t) => P(t.name)).sort();
      const got = aTools.filter((t) => t.name.startsWith(opts.key + opts.sep)).map((t) => t.name).sort();
      assert(diff(got, want) === undefined, `prefixed tools ${short(got)}, want ${short(want)}`);
    });

    // resources/list
    await check("resources-list", async () => {
      const listResources = (c) => c.list("resources/list", "resources", (p, o) => c.client.listResources(p, o), MAX_PAGES);
      const dRes = await listResources(direct);
      const aRes = await listResources(agg);
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
      const d = await direct.raw("resources/read", (o) => direct.client.readResource({ uri: UI_URI }, o));
      const a = await agg.raw("resources/read", (o) => agg.client.readResource({ uri: UI_URI }, o));
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
      const text = textOf(r, "");
      assert(isISOTime(text) && Date.parse(text) === Date.parse(t), `${label}: text content ${short(text)} does not parse to structuredContent.time ${t}`);
    };
    let directCall;
    await check("call-direct", async () => {
      directCall = await direct.raw("tools/call", (o) => direct.client.callTool({ name: TOOL, arguments: {} }, undefined, o));
      report.seen.directCall = directCall;
      timeShape("direct", directCall);
    });
    for (const [name, label] of [[P(TOOL), "call-prefixed"], [TOOL, "call-unprefixed"]]) {
      await check(label, async () => {
        const r = await agg.raw("tools/call", (o) => agg.client.callTool({ name, arguments: {} }, undefined, o));
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
        const params = await childInitializeParams(report, agg, O("initparams"));
        const got = params?.capabilities?.extensions?.[UI_EXTENSION];
        const dd = diff(got, CLIENT_CAPABILITIES.extensions[UI_EXTENSION]);
        assert(dd === undefined, `child saw capabilities.extensions["${UI_EXTENSION}"] ${short(got)}, the client declared ${short(CLIENT_CAPABILITIES.extensions[UI_EXTENSION])}: ${dd}`);
        const sent = agg.initializeRequest.params.capabilities;
        const dc = diff(params.capabilities, sent);
        assert(dc === undefined, `child capabilities ${short(params.capabilities)} differ from what the client sent ${short(sent)}: ${dc}`);
      });
    }
  });
}

runMain("apps.mjs", main);
