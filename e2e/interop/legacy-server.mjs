#!/usr/bin/env node
// legacy-server: a LEGACY-only (protocol 2025-11-25) stdio server built on the TypeScript SDK v1
// (@modelcontextprotocol/sdk 1.32.2: McpServer + StdioServerTransport), the counterpart of
// era-server.mjs for the protocol-era interop tests. It offers the same tools, so that the same
// client scenario (era-client.mjs, e2e/gosdk) runs against it:
//
//   echo {text}   answers "echo: TEXT".
//   two_round     two real elicitation/create requests to the client (server.elicitInput), the
//                 name first, then the color; answers "name=NAME color=COLOR".
//   add_tool      registers the tool `added`, which makes the SDK send
//                 notifications/tools/list_changed.
//   prompt greet {name} and resource era://note, as era-server.mjs has them.
//
// It knows nothing of the 2026-07-28 era: server/discover is not a method of v1, which answers
// it with the JSON-RPC error -32601 (Method not found), as it does subscriptions/listen; the
// official clients then fall back to initialize (the Go SDK by default, TS v2 in "auto" mode)
// or give up (TS v2 pinned to 2026-07-28).
//
// Usage: node legacy-server.mjs. Logs go to stderr.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const log = (...args) => console.error("[legacy-server]", ...args);
const text = (t) => ({ content: [{ type: "text", text: t }] });

const server = new McpServer(
  { name: "legacy-server", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } } }
);

server.registerTool("echo", { description: "Echo the text back", inputSchema: { text: z.string() } }, async ({ text: t }) =>
  text(`echo: ${t}`)
);

// ask sends one form elicitation for the string field `field` (related to the tools/call being
// served) and returns the value the client accepted, or undefined.
const ask = async (extra, message, field) => {
  const r = await server.server.elicitInput(
    { mode: "form", message, requestedSchema: { type: "object", properties: { [field]: { type: "string" } }, required: [field] } },
    { relatedRequestId: extra.requestId }
  );
  log(`elicitation for ${field}: ${JSON.stringify(r)}`);
  return r.action === "accept" && typeof r.content?.[field] === "string" ? r.content[field] : undefined;
};

server.registerTool("two_round", { description: "Asks for a name, then (second round) for a color" }, async (extra) => {
  const name = await ask(extra, "What is your name?", "name");
  if (name === undefined) return { ...text("no name given"), isError: true };
  const color = await ask(extra, `Hello ${name}, what is your favourite color?`, "color");
  if (color === undefined) return { ...text(`no color given for ${name}`), isError: true };
  return text(`name=${name} color=${color}`);
});

let added = false;
server.registerTool("add_tool", { description: "Registers the tool `added` (tools list changes)" }, async () => {
  if (!added) {
    added = true;
    // registerTool on a connected McpServer sends notifications/tools/list_changed.
    server.registerTool("added", { description: "Added at run time" }, async () => text("added"));
  }
  return text("tool `added` registered");
});

server.registerPrompt("greet", { description: "Greets someone", argsSchema: { name: z.string() } }, async ({ name }) => ({
  messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }],
}));

server.registerResource("note", "era://note", { mimeType: "text/plain", description: "A note" }, async (uri) => ({
  contents: [{ uri: uri.href, mimeType: "text/plain", text: "note" }],
}));

await server.connect(new StdioServerTransport());
log("serving on stdio (legacy only, protocol 2025-11-25)");

const shutdown = () => void server.close().finally(() => process.exit(0));
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
