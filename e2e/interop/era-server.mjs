#!/usr/bin/env node
// era-server: a TypeScript SDK v2 (@modelcontextprotocol/server) stdio server
// used as a real peer for the protocol-era interop tests (2025 "legacy" era
// with initialize, 2026-07-28 "modern" era with server/discover and a
// per-request _meta envelope).
//
// Usage: node era-server.mjs [--modern-only]
//   default        dual-era: serveStdio() pins each connection to the era its
//                  opening message selects (initialize => legacy, an
//                  enveloped request => modern).
//   --modern-only  serveStdio(..., { legacy: 'reject' }): a 2025 opening such
//                  as initialize is answered with the error
//                  {"code":-32022,"message":"Unsupported protocol version: 2025-11-25",
//                   "data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}
//                  and the connection stays open for a modern opening.
// Either way, once a connection is pinned modern: a request without the
// _meta envelope gets -32602, ping and logging/setLevel get -32601, and a
// late initialize gets the -32022 above.
//
// Tools: echo {text}; two_round (two sequential form elicitations, name then
// color); add_tool (registers tool `added`, which emits the tools
// list-changed notification). Prompt: greet {name}. Resource: era://note.
//
// two_round is written once, in the modern style: it returns inputRequired()
// results and carries its progress in requestState. In the modern era these
// go on the wire as resultType "input_required" and the client retries the
// call with inputResponses + requestState. In the legacy era the SDK's
// legacy shim (legacyInputRequiredShim.ts, on by default) turns each round
// into a real elicitation/create request to the client and re-enters the
// handler with the answers, so the same definition works in both eras.
import { McpServer, acceptedContent, fromJsonSchema, inputRequired } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

const modernOnly = process.argv.includes("--modern-only");
const log = (...args) => console.error("[era-server]", ...args);

const obj = (properties, required = Object.keys(properties)) => fromJsonSchema({ type: "object", properties, required });
const text = t => ({ content: [{ type: "text", text: t }] });

// requestState is opaque to the client and echoed back byte-for-byte. A real
// server signs it (createRequestStateCodec); a test peer keeps it readable.
const encodeState = s => Buffer.from(JSON.stringify(s)).toString("base64url");
const decodeState = raw => {
  try {
    return typeof raw === "string" ? JSON.parse(Buffer.from(raw, "base64url").toString()) : undefined;
  } catch {
    return undefined;
  }
};

const buildServer = ({ era } = {}) => {
  log(`factory: building an instance for the ${era ?? "unknown"} era`);
  const server = new McpServer(
    { name: "era-server", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } } }
  );

  server.registerTool(
    "echo",
    { description: "Echo the text back", inputSchema: obj({ text: { type: "string" } }) },
    async ({ text: t }) => text(`echo: ${t}`)
  );

  server.registerTool(
    "two_round",
    { description: "Asks for a name, then (second round) for a color", inputSchema: obj({}) },
    async (_args, ctx) => {
      // Round 1: no state yet. Ask for the name (or read it if this is
      // the retry that carries the answer).
      const state = decodeState(ctx.mcpReq.requestState?.());
      if (state?.name === undefined) {
        const got = acceptedContent(ctx.mcpReq.inputResponses, "name");
        if (typeof got?.name !== "string") {
          return inputRequired({
            inputRequests: {
              name: inputRequired.elicit({
                message: "What is your name?",
                requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] }
              })
            }
          });
        }
        // Round 2: the name is known; carry it in requestState and ask for the color.
        return inputRequired({
          inputRequests: {
            color: inputRequired.elicit({
              message: `Hello ${got.name}, what is your favourite color?`,
              requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] }
            })
          },
          requestState: encodeState({ name: got.name })
        });
      }
      const color = acceptedContent(ctx.mcpReq.inputResponses, "color");
      if (typeof color?.color !== "string") {
        return { ...text(`no color given for ${state.name}`), isError: true };
      }
      return text(`name=${state.name} color=${color.color}`);
    }
  );

  let added = false;
  server.registerTool("add_tool", { description: "Registers the tool `added` (tools list changes)", inputSchema: obj({}) }, async () => {
    if (!added) {
      added = true;
      // registerTool after connect sends notifications/tools/list_changed:
      // unsolicited in the legacy era; in the modern era serveStdio's
      // listen router delivers it only on subscriptions/listen streams
      // whose filter asked for toolsListChanged.
      server.registerTool("added", { description: "Added at run time", inputSchema: obj({}) }, async () => text("added"));
    }
    return text("tool `added` registered");
  });

  server.registerPrompt(
    "greet",
    { description: "Greets someone", argsSchema: obj({ name: { type: "string" } }) },
    async ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }] })
  );

  server.registerResource("note", "era://note", { mimeType: "text/plain", description: "A note" }, async uri => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "note" }]
  }));

  return server;
};

const handle = serveStdio(buildServer, {
  legacy: modernOnly ? "reject" : "serve",
  onerror: err => log("error:", err?.message ?? err)
});
log(`serving on stdio (${modernOnly ? "modern only" : "dual era"})`);

const shutdown = () => void handle.close().finally(() => process.exit(0));
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
