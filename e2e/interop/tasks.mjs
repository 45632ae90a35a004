#!/usr/bin/env node
// MCP tasks (protocol 2025-11-25) interoperability check for mcp-simple-aggregator.
//
// Connects with the official TypeScript SDK client (v1: Client + StdioClientTransport) twice,
// once directly to the official reference server @modelcontextprotocol/server-everything
// (spawned by this script from ./node_modules, over stdio) and once to the command given after
// `--` (the aggregator, with server-everything behind it under --key). Both clients declare
//     sampling {}, elicitation {},
//     tasks {list {}, cancel {}, requests {sampling {createMessage {}}, elicitation {create {}}}}
// and both run the same steps, the two connections side by side; what each step saw is compared
// and kept in the report. Task requests go through the SDK (client.request with the task
// option, client.experimental.tasks.getTask/getTaskResult/listTasks/cancelTask); every
// comparison works on the raw JSON-RPC messages as read off the wire.
//   initialize        the aggregator advertises tasks with list, cancel and requests.tools.call,
//                     equal to server-everything's own tasks capability
//   tools-list        once notifications/tools/list_changed has settled (server-everything adds
//                     its conditional tools after initialization), the direct list is the
//                     expected set of 17 tools and the aggregator lists the same, prefixed;
//                     KEY<sep>simulate-research-query equals the direct entry but for its name
//                     (execution.taskSupport "required")
//   child-capabilities  (with --other-key) the project's test server, which declares no tasks,
//                     received the client's capabilities, tasks included, as written
//   task-cancel       a task-augmented simulate-research-query, cancelled with tasks/cancel:
//                     status "cancelled" under the id the client was given, and so in tasks/get;
//                     cancelled again: -32602 (the task is in a terminal status)
//   task-create       simulate-research-query {topic "python", ambiguous true} with params.task
//                     {ttl 60000}: a CreateTaskResult; through the aggregator its taskId starts
//                     with mcp-simple-aggregator-task-
//   tasks-list        before the result is fetched, tasks/list holds the task under the id the
//                     client knows, and the cancelled task, cancelled, under its id (the
//                     aggregator lists no id it did not give the client)
//   task-poll         tasks/get every pollInterval (bounded) until input_required: same statuses
//                     and the client's id both ways
//   task-result       tasks/result, and tasks/get while it is pending (answered both ways);
//                     the server's clarifying elicitation/create arrives meanwhile,
//                     its _meta related-task naming the client's id, and is accepted as directly;
//                     the result equals the direct one but for _meta, whose related-task taskId
//                     is the id the client was given
//   task-status-notifications  every notifications/tasks/status carries an id the client was
//                     given; the round's task went through the same statuses both ways
//   tasks-list-after-result  every task tasks/list shows after the result was fetched is under an
//                     id the client was given; the fetched task is still listed, with the status
//                     it has directly, and the statuses listed are the direct ones
//   tasks-get-after-result  tasks/get of the fetched task answers as directly (completed), under
//                     the id the client was given
//   client-task-sampling / client-task-elicitation  trigger-sampling-request-async and
//                     trigger-elicitation-request-async: the server sends a task-augmented
//                     request, this client answers with a CreateTaskResult of its own id
//                     (client-task-N) and serves the server's tasks/get and tasks/result; the
//                     client and the server (as its final text tells) see the client's id,
//                     client-task-N, both ways: the aggregator passes it through; the tool's
//                     result content equals the direct one
//   unknown-task-ids  tasks/get, tasks/result and tasks/cancel of ids the client was never given
//                     ("nonsense", the child's raw id of the cancelled task as the child logged
//                     it, a task id of the direct server, the id of a task the client runs for
//                     the server) are JSON-RPC errors through the aggregator, as
//                     "nonsense" is directly
//   no-client-errors  neither SDK client reported a protocol error
// Notes (report.notes) record behaviour that differs from a direct connection without failing
// a check: task status notifications seen only directly.
//
// Output: stdout carries one JSON report {ok, checks: [{name, ok, ms, error?}], failures,
// timings, seen, notes}; every failure is also printed to stderr as "tasks.mjs: not ok NAME:
// reason". Exit code 0 if every check passed, 1 if one failed, 2 on bad usage. The children's
// stderr goes to this script's stderr.
//
// Usage:
//   node tasks.mjs --sep SEP [--key everything] [--other-key other]
//                  [--server-name mcp-simple-aggregator] [--timeout MS] -- AGGREGATOR [ARGS...]
//   --sep S           the aggregator's separator (":" or "__"); required
//   --key K           server-everything's key in the aggregator config (default "everything")
//   --other-key K     key of the project's test server (e2e/testserver) in the config; enables
//                     the child-capabilities check (default: none)
//   --server-name N   serverInfo.name the aggregator must report (default "mcp-simple-aggregator")
//   --timeout MS      per-step time limit (default 10000); the whole run gets 10 times that
//
// Example (from e2e/interop, with an aggregator config cfg.json holding "everything" and "other"):
//   node tasks.mjs --sep : --other-key other -- /path/to/mcp-simple-aggregator --config cfg.json

import {
  CallToolResultSchema,
  CancelTaskRequestSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import {
  EVERYTHING_ENTRY, CheckError, Run, WireConn, assert, childInitializeParams, diff, parseCompareOptions, runMain,
  sameToolEntry, shape, short, sleep, textOf, usageOf, without,
} from "./lib.mjs";

const CLIENT_CAPABILITIES = {
  sampling: {},
  elicitation: {},
  tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
};
const RELATED = "io.modelcontextprotocol/related-task";
const AGG_TASK_PREFIX = "mcp-simple-aggregator-task-";
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
const TASK_TTL = 60000;
// server-everything 2026.8.31 offers a client with the capabilities above these tools: twelve
// always, five more (added after initialization, announced with tools/list_changed) for
// sampling, elicitation and their task-augmented forms.
const EXPECTED_TOOLS = [
  "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
  "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
  "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
  "simulate-research-query", "trigger-elicitation-request", "trigger-sampling-request",
  "trigger-sampling-request-async", "trigger-elicitation-request-async",
].sort();
const RESEARCH = "simulate-research-query";
const RESEARCH_ARGS = { topic: "python", ambiguous: true };
const CLARIFICATION = "programming"; // one of the interpretations it offers for "python"
const SAMPLE_PROMPT = "interop tasks prompt";
const ELICIT_ANSWER = { name: "Interop Tester", favoriteColor: "Blue", agreeToTerms: true };
// What server-everything logs when the background work of a cancelled research task next runs.
const CANCELLED_LOG = /Research task ([0-9a-f]{16,}) failed/;

const usage = usageOf(import.meta.url);

const relatedOf = (obj) => obj?._meta?.[RELATED]?.taskId;
// A JSON-RPC error as the report keeps it.
const errInfo = (e) => (typeof e?.code === "number" ? { code: e.code, message: String(e.message) } : { message: String(e?.message ?? e) });

// ---------------------------------------------------------------------------------------------
// One connection (lib.mjs's WireConn: the raw JSON-RPC messages both ways) that also acts as a
// task receiver for the server's task-augmented sampling and elicitation (the SDK v1 client has
// no task store of its own unless given one; this one keeps its tasks in a Map under ids
// client-task-1, client-task-2, ...).

class Conn extends WireConn {
  constructor(label, command, args, timeout, pipeStderr) {
    super(label, command, args, { timeout, clientName: "mcp-simple-aggregator-tasks-interop", capabilities: CLIENT_CAPABILITIES, pipeStderr });
    this.clientTasks = new Map(); // our tasks, by our id
    this.clientTaskSeq = 0;
    this.installTaskReceiver();
  }

  installTaskReceiver() {
    const c = this.client;
    const newTask = (params, produce) => {
      const now = new Date().toISOString();
      const t = {
        task: { taskId: `client-task-${++this.clientTaskSeq}`, status: "working", ttl: params.task.ttl ?? TASK_TTL, createdAt: now, lastUpdatedAt: now, pollInterval: 500 },
        result: undefined,
      };
      this.clientTasks.set(t.task.taskId, t);
      // The work is done right after the CreateTaskResult is sent.
      setImmediate(() => {
        if (t.task.status !== "working") return;
        t.result = produce();
        t.task = { ...t.task, status: "completed", lastUpdatedAt: new Date().toISOString() };
        this.wake();
      });
      return { task: { ...t.task } };
    };
    const lookup = (id) => {
      const t = this.clientTasks.get(id);
      if (!t) throw new McpError(-32602, `Failed to retrieve task: Task not found: ${id}`);
      return t;
    };
    c.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const p = req.params;
      const first = p.messages?.[0]?.content;
      const reply = {
        role: "assistant",
        content: { type: "text", text: `interop async sample reply [${first?.type === "text" ? first.text : ""}]` },
        model: "interop-model",
        stopReason: "endTurn",
      };
      return p.task ? newTask(p, () => reply) : reply;
    });
    c.setRequestHandler(ElicitRequestSchema, async (req) => {
      const p = req.params;
      if (p.task) return newTask(p, () => ({ action: "accept", content: { ...ELICIT_ANSWER } }));
      // simulate-research-query's clarification: pick the programming language.
      return { action: "accept", content: { interpretation: CLARIFICATION } };
    });
    c.setRequestHandler(GetTaskRequestSchema, async (req) => ({ ...lookup(req.params.taskId).task }));
    c.setRequestHandler(GetTaskPayloadRequestSchema, async (req) => {
      const id = req.params.taskId;
      const t = lookup(id);
      // tasks/result waits for the task to end (bounded).
      await this.waitUntil(() => (TERMINAL.has(t.task.status) ? true : undefined), this.timeout, `end of ${id}`);
      if (t.task.status !== "completed") throw new McpError(-32603, `Task ${id} ${t.task.status}`);
      return { ...t.result, _meta: { [RELATED]: { taskId: id } } };
    });
    c.setRequestHandler(ListTasksRequestSchema, async () => ({ tasks: [...this.clientTasks.values()].map((t) => ({ ...t.task })) }));
    c.setRequestHandler(CancelTaskRequestSchema, async (req) => {
      const t = lookup(req.params.taskId);
      if (TERMINAL.has(t.task.status)) throw new McpError(-32602, `Cannot cancel task in terminal status: ${t.task.status}`);
      t.task = { ...t.task, status: "cancelled", lastUpdatedAt: new Date().toISOString() };
      return { ...t.task };
    });
  }

  listTasks() { return this.list("tasks/list", "tasks", (p, o) => this.client.experimental.tasks.listTasks(p.cursor, o)); }
}

// ---------------------------------------------------------------------------------------------
// The run

async function main() {
  const opts = parseCompareOptions(process.argv.slice(2), usage, "everything");
  const T = opts.timeout;
  const P = (name) => opts.key + opts.sep + name;
  const O = (name) => opts.otherKey + opts.sep + name;
  const run = new Run("tasks.mjs", opts, 10 * T, { notes: [] });
  const { report } = run;
  const check = (checkName, fn, limit) => run.check(checkName, fn, limit);

  const direct = new Conn("direct", process.execPath, [EVERYTHING_ENTRY, "stdio"], T, false);
  const agg = new Conn("aggregator", opts.command, opts.args, T, true);
  const both = [direct, agg];
  // Per connection: the name it calls a server-everything tool by, and what the steps saw.
  const name = (c, tool) => (c === agg ? P(tool) : tool);
  const st = new Map(both.map((c) => [c, { given: new Set(), statusFrom: 0 }]));
  const seen = (key, c, value) => { report.seen[(c === agg ? "aggregator" : "direct") + key] = value; };

  // Runs step on both connections side by side; returns [direct's, aggregator's] values.
  const each = (step) => Promise.all(both.map((c) => step(c)));

  // A task-augmented tools/call of simulate-research-query: the raw CreateTaskResult.
  const createTask = async (c, args) => {
    const r = await c.raw("tools/call", (o) => c.client.request(
      { method: "tools/call", params: { name: name(c, RESEARCH), arguments: args } },
      CreateTaskResultSchema, { ...o, task: { ttl: TASK_TTL } }));
    const task = r.task;
    assert(task && typeof task.taskId === "string" && task.taskId, `${c.label}: tools/call with params.task answered no CreateTaskResult: ${short(r, 400)}`);
    const sent = c.sent.filter((m) => m.method === "tools/call").at(-1);
    assert(sent?.params?.task?.ttl === TASK_TTL, `${c.label}: the SDK did not send params.task: ${short(sent)}`);
    if (c === agg) {
      assert(task.taskId.startsWith(AGG_TASK_PREFIX), `aggregator: CreateTaskResult taskId ${short(task.taskId)} does not start with ${AGG_TASK_PREFIX}`);
    }
    st.get(c).given.add(task.taskId);
    return task;
  };

  return run.compare(direct, agg, async () => {
    await check("initialize", async () => {
      for (const c of both) {
        const sentCaps = c.initializeRequest?.params?.capabilities;
        assert(diff(sentCaps, CLIENT_CAPABILITIES) === undefined,
          `${c.label}: the SDK client did not send the capabilities as declared: ${short(sentCaps, 400)}`);
      }
      const [d, a] = run.initializeResults(direct, agg, opts.serverName, (r) => without(r, "instructions"));
      const want = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
      const dt = diff(d.capabilities?.tasks, want);
      assert(dt === undefined, `server-everything's tasks capability is not the expected one: ${dt}`);
      const at = diff(a.capabilities?.tasks, d.capabilities.tasks);
      assert(at === undefined, `aggregator capabilities.tasks ${short(a.capabilities?.tasks)} differs from server-everything's (aggregator left, direct right): ${at}`);
    });

    await check("tools-list", async () => {
      // The conditional tools come after initialization with tools/list_changed: list, and
      // while the list is short of them, wait for the next list_changed and list again.
      const settled = async (c) => {
        const want = EXPECTED_TOOLS.map((t) => name(c, t)).sort();
        let tools, got, mark;
        for (let attempt = 0; attempt < 5; attempt++) {
          mark = c.inbound.length;
          tools = await c.listTools();
          got = tools.map((t) => t.name).filter((n) => c === direct || n.startsWith(opts.key + opts.sep)).sort();
          if (diff(got, want) === undefined) return tools;
          if (got.length >= want.length) break;
          await c.waitUntil(() => (c.notifications("notifications/tools/list_changed", mark).length ? true : undefined),
            T / 2, "notifications/tools/list_changed").catch(() => {});
        }
        throw new CheckError(`${c.label}: server-everything's tools ${short(got, 1200)}, want ${short(want, 1200)}: ${diff(got, want)}`);
      };
      const [dTools, aTools] = await each(settled);
      report.seen.toolCounts = {
        direct: dTools.length,
        aggregatorPrefixed: aTools.filter((t) => t.name.startsWith(opts.key + opts.sep)).length,
        aggregatorAll: aTools.length,
      };
      const [d] = sameToolEntry(report, dTools, aTools, RESEARCH, P(RESEARCH));
      assert(d.execution?.taskSupport === "required", `direct ${RESEARCH}: execution ${short(d.execution)}`);
    });

    if (opts.otherKey) {
      await check("child-capabilities", async () => {
        const params = await childInitializeParams(report, agg, O("initparams"));
        const dc = diff(params?.capabilities, agg.initializeRequest.params.capabilities);
        assert(dc === undefined, `the test server received capabilities ${short(params?.capabilities, 400)}, the client sent ${short(agg.initializeRequest.params.capabilities, 400)}: ${dc}`);
      });
    }

    // A second task, cancelled at once.
    await check("task-cancel", async () => {
      const [dv, av] = await each(async (c) => {
        const task = await createTask(c, { topic: "interop cancel" });
        const cancelled = await c.raw("tasks/cancel", (o) => c.client.experimental.tasks.cancelTask(task.taskId, o));
        assert(cancelled.taskId === task.taskId && cancelled.status === "cancelled",
          `${c.label}: tasks/cancel of ${task.taskId} answered ${short(cancelled, 400)}`);
        const got = await c.raw("tasks/get", (o) => c.client.experimental.tasks.getTask(task.taskId, o));
        assert(got.taskId === task.taskId && got.status === "cancelled", `${c.label}: tasks/get of the cancelled ${task.taskId} answered ${short(got, 400)}`);
        // Cancelled again: refused with -32602, the spec's answer to the cancel of a task in a
        // terminal status; the server keeps the task all the same (tasks-list lists it).
        const again = await c.rawError("tasks/cancel", (o) => c.client.experimental.tasks.cancelTask(task.taskId, o));
        assert(again.code === -32602, `${c.label}: the second tasks/cancel of ${task.taskId} answered ${short(again, 400)}`);
        st.get(c).cancelled = task.taskId;
        return { created: task, cancel: cancelled, get: got, cancelAgain: again };
      });
      report.seen.directCancel = dv;
      report.seen.aggregatorCancel = av;
      const dd = diff(shape(without(av.cancel, "statusMessage")), shape(without(dv.cancel, "statusMessage")));
      assert(dd === undefined, `tasks/cancel result shape differs (aggregator left, direct right): ${dd}`);
    });

    // The round: create, list, poll, result (with the clarifying elicitation on the way).
    await check("task-create", async () => {
      const [dv, av] = await each(async (c) => {
        st.get(c).statusFrom = c.inbound.length;
        const task = await createTask(c, RESEARCH_ARGS);
        assert(task.status === "working", `${c.label}: new task status ${short(task.status)}`);
        st.get(c).round = task.taskId;
        st.get(c).pollInterval = task.pollInterval;
        return task;
      });
      report.seen.directCreated = dv;
      report.seen.aggregatorCreated = av;
      const dd = diff(shape(av), shape(dv));
      assert(dd === undefined, `CreateTaskResult.task shape differs (aggregator left, direct right): ${dd}`);
    });

    await check("tasks-list", async () => {
      const [dl, al] = await each(async (c) => {
        const id = st.get(c).round;
        assert(id, `${c.label}: no task`);
        const tasks = await c.listTasks();
        const mine = tasks.find((t) => t.taskId === id);
        assert(mine, `${c.label}: tasks/list has no ${id}: ${short(tasks.map((t) => `${t.taskId} ${t.status}`), 600)}`);
        assert(!TERMINAL.has(mine.status), `${c.label}: tasks/list shows ${id} as ${mine.status} before its result`);
        const cancelled = tasks.find((t) => t.taskId === st.get(c).cancelled);
        assert(cancelled?.status === "cancelled", `${c.label}: tasks/list shows the task cancelled (twice) as ${short(cancelled)}, not under ${st.get(c).cancelled}, cancelled: ${short(tasks.map((t) => `${t.taskId} ${t.status}`), 600)}`);
        if (c === agg) {
          const foreign = tasks.filter((t) => !st.get(c).given.has(t.taskId));
          assert(!foreign.length, `aggregator: tasks/list holds ids the client was never given: ${short(foreign, 600)} (given: ${short([...st.get(c).given])})`);
        }
        return tasks;
      });
      report.seen.directTasksList = dl;
      report.seen.aggregatorTasksList = al;
    });

    await check("task-poll", async () => {
      const [dv, av] = await each(async (c) => {
        const id = st.get(c).round;
        assert(id, `${c.label}: no task`);
        const statuses = [];
        for (let poll = 0; poll < 20; poll++) {
          const got = await c.raw("tasks/get", (o) => c.client.experimental.tasks.getTask(id, o));
          assert(got.taskId === id, `${c.label}: tasks/get of ${id} answered taskId ${short(got.taskId)}: ${short(got, 400)}`);
          assert(relatedOf(got) === undefined || relatedOf(got) === id, `${c.label}: tasks/get related-task ${short(relatedOf(got))}`);
          if (statuses.at(-1) !== got.status) statuses.push(got.status);
          if (got.status === "input_required" || TERMINAL.has(got.status)) return { statuses, last: got };
          await sleep(Math.min(Math.max(got.pollInterval ?? 1000, 50), 2000));
        }
        throw new CheckError(`${c.label}: ${id} still ${short(statuses)} after 20 polls`);
      });
      report.seen.directPoll = dv.statuses;
      report.seen.aggregatorPoll = av.statuses;
      assert(diff(av.statuses, dv.statuses) === undefined, `polled statuses differ: aggregator ${short(av.statuses)}, direct ${short(dv.statuses)}`);
      assert(dv.last.status === "input_required", `direct: the ambiguous query ended polling as ${dv.last.status}, not input_required`);
      const dd = diff(shape(without(av.last, "statusMessage")), shape(without(dv.last, "statusMessage")));
      assert(dd === undefined, `tasks/get result shape differs (aggregator left, direct right): ${dd}`);
    }, 2 * T);

    await check("task-result", async () => {
      const [dv, av] = await each(async (c) => {
        const id = st.get(c).round;
        assert(id, `${c.label}: no task`);
        const from = c.inbound.length;
        const pending = c.raw("tasks/result", (o) => c.client.experimental.tasks.getTaskResult(id, CallToolResultSchema, o));
        // Polled while its result is awaited, as a client showing progress does.
        const during = await c.raw("tasks/get", (o) => c.client.experimental.tasks.getTask(id, o));
        assert(during.taskId === id && typeof during.status === "string", `${c.label}: tasks/get of ${id} while tasks/result is pending answered ${short(during, 400)}`);
        const r = await pending;
        const elicits = c.requestsIn("elicitation/create", from);
        assert(elicits.length === 1, `${c.label}: ${elicits.length} elicitation/create requests while tasks/result of ${id} ran`);
        const e = elicits[0];
        assert(relatedOf(e.params) === id, `${c.label}: the clarifying elicitation/create names related task ${short(relatedOf(e.params))}, the client knows the task as ${id}: ${short(e, 500)}`);
        const answer = c.answerTo(e.id);
        assert(answer?.result?.action === "accept", `${c.label}: our answer to the elicitation ${short(answer)}`);
        assert(relatedOf(r) === undefined || relatedOf(r) === id, `${c.label}: tasks/result _meta related-task ${short(relatedOf(r))}, the client knows the task as ${id}`);
        assert(!r.isError, `${c.label}: tasks/result isError: ${short(r, 400)}`);
        assert(textOf(r).startsWith(`# Research Report: python (${CLARIFICATION})`), `${c.label}: result text ${short(textOf(r), 300)}`);
        st.get(c).resultRelated = relatedOf(r);
        return { result: r, elicitation: e.params, related: relatedOf(r), during: during.status };
      });
      report.seen.directResult = { related: dv.related, meta: dv.result._meta, contentTypes: dv.result.content.map((x) => x.type), isError: dv.result.isError ?? null, elicitationRelated: relatedOf(dv.elicitation) };
      report.seen.aggregatorResult = { related: av.related, meta: av.result._meta, contentTypes: av.result.content.map((x) => x.type), isError: av.result.isError ?? null, elicitationRelated: relatedOf(av.elicitation) };
      report.seen.statusWhileResultPending = { direct: dv.during, aggregator: av.during };
      const dd = diff(without(av.result, "_meta"), without(dv.result, "_meta"));
      assert(dd === undefined, `tasks/result differs from direct but for _meta (aggregator left, direct right): ${dd}`);
      assert((dv.related === undefined) === (av.related === undefined), `related-task _meta: direct ${short(dv.related)}, aggregator ${short(av.related)}`);
      const de = diff(without(av.elicitation, "_meta"), without(dv.elicitation, "_meta"));
      assert(de === undefined, `the clarifying elicitation differs from direct but for _meta (aggregator left, direct right): ${de}`);
    }, 2 * T);

    await check("task-status-notifications", async () => {
      const [dv, av] = await each(async (c) => {
        const ns = c.notifications("notifications/tasks/status");
        for (const n of ns) {
          assert(st.get(c).given.has(n.params?.taskId), `${c.label}: notifications/tasks/status for ${short(n.params?.taskId)}, an id the client was never given: ${short(n, 400)}`);
        }
        const round = c.notifications("notifications/tasks/status", st.get(c).statusFrom).filter((n) => n.params.taskId === st.get(c).round);
        const which = (id) => (id === st.get(c).round ? "round" : id === st.get(c).cancelled ? "cancelled" : "other");
        const all = ns.map((n) => `${which(n.params.taskId)} ${n.params.status} ${n.params.statusMessage ?? ""}`.trim());
        return { count: ns.length, roundStatuses: [...new Set(round.map((n) => n.params.status))].sort(), all };
      });
      report.seen.directStatusNotifications = dv;
      report.seen.aggregatorStatusNotifications = av;
      // Not a check (status notifications are optional): which of the direct ones did not come
      // through the aggregator.
      const missing = [...dv.all];
      for (const s of av.all) { const i = missing.indexOf(s); if (i >= 0) missing.splice(i, 1); }
      if (missing.length) report.notes.push(`notifications/tasks/status seen directly but not through the aggregator: ${short(missing, 600)}`);
      assert(diff(av.roundStatuses, dv.roundStatuses) === undefined, `statuses notified for the round's task: aggregator ${short(av.roundStatuses)}, direct ${short(dv.roundStatuses)}`);
      if (dv.count > 0) assert(av.count > 0, "server-everything sent notifications/tasks/status directly, none came through the aggregator");
    });

    await check("tasks-list-after-result", async () => {
      const [dl, al] = await each(async (c) => c.listTasks());
      const listing = (ts) => ts.map((t) => ({ taskId: t.taskId, status: t.status, createdAt: t.createdAt }));
      report.seen.directTasksListAfterResult = listing(dl);
      report.seen.aggregatorTasksListAfterResult = listing(al);
      const dRound = dl.find((t) => t.taskId === st.get(direct).round);
      assert(dRound?.status === "completed", `direct: tasks/list after the result shows the task as ${short(dRound)}`);
      const given = st.get(agg).given;
      const foreign = al.filter((t) => !given.has(t.taskId));
      assert(!foreign.length, `aggregator: tasks/list after the result holds tasks under ids the client was never given: ${short(listing(foreign), 600)}; the client was given ${short([...given])} (its round task ${st.get(agg).round} created at ${report.seen.aggregatorCreated?.createdAt})`);
      // As directly: the fetched task is still listed, completed, under the id the client knows.
      const aRound = al.find((t) => t.taskId === st.get(agg).round);
      assert(aRound?.status === dRound.status, `aggregator: tasks/list after the result shows the round's task as ${short(aRound)}, directly ${short(dRound)}`);
      const statuses = (ts) => ts.map((t) => t.status).sort();
      assert(diff(statuses(al), statuses(dl)) === undefined, `tasks/list after the result: statuses ${short(statuses(al))} through the aggregator, ${short(statuses(dl))} directly`);
    });
    await check("tasks-get-after-result", async () => {
      const [dv, av] = await each(async (c) => {
        const id = st.get(c).round;
        assert(id, `${c.label}: no task`);
        const { response } = await c.rawExchange("tasks/get", (o) => c.client.experimental.tasks.getTask(id, o)).catch((e) => ({ response: { error: errInfo(e) } }));
        seen("GetAfterResult", c, response.error ? { error: response.error } : { status: response.result?.status, taskId: response.result?.taskId });
        return response;
      });
      assert(!dv.error && dv.result?.status === "completed", `direct: tasks/get after the result answered ${short(dv, 400)}`);
      assert(!av.error && av.result?.taskId === st.get(agg).round, `aggregator: tasks/get after the result answered ${short(av, 400)}, directly ${short(dv, 400)}`);
      const dd = diff(without(av.result, "taskId", "lastUpdatedAt", "createdAt"), without(dv.result, "taskId", "lastUpdatedAt", "createdAt"));
      assert(dd === undefined, `tasks/get after the result differs from direct but for its id and times (aggregator left, direct right): ${dd}`);
    });

    // Client-side tasks: the server asks the client to run sampling / elicitation as a task.
    const clientTaskCheck = async (checkName, tool, args, kind, okText) => {
      await check(checkName, async () => {
        const [dv, av] = await each(async (c) => {
          const from = c.inbound.length;
          const r = await c.raw("tools/call", (o) => c.client.callTool({ name: name(c, tool), arguments: args }, undefined, o));
          const method = kind === "sampling" ? "sampling/createMessage" : "elicitation/create";
          const reqs = c.requestsIn(method, from);
          assert(reqs.length === 1, `${c.label}: ${reqs.length} ${method} requests during ${tool}`);
          assert(reqs[0].params?.task && typeof reqs[0].params.task === "object", `${c.label}: ${method} came without params.task: ${short(reqs[0], 400)}`);
          const created = c.answerTo(reqs[0].id)?.result?.task?.taskId;
          assert(/^client-task-\d+$/.test(created ?? ""), `${c.label}: our CreateTaskResult ${short(c.answerTo(reqs[0].id))}`);
          const polls = [...c.requestsIn("tasks/get", from), ...c.requestsIn("tasks/result", from), ...c.requestsIn("tasks/cancel", from)]
            .map((m) => ({ method: m.method, taskId: m.params?.taskId, answer: c.answerTo(m.id)?.error ? "error" : "result" }));
          assert(polls.some((p) => p.method === "tasks/get"), `${c.label}: the server never polled tasks/get`);
          assert(polls.some((p) => p.method === "tasks/result"), `${c.label}: the server never fetched tasks/result`);
          for (const p of polls) {
            assert(p.taskId === created && p.answer === "result", `${c.label}: the server's ${p.method} named ${short(p.taskId)} (answered with ${p.answer}); the client's task is ${created}`);
          }
          const text = textOf(r);
          assert(!r.isError && text.startsWith(okText), `${c.label}: ${tool} answered ${short(text, 400)}`);
          const serverId = /Task created: (\S+)/.exec(text)?.[1];
          // The raw tasks/result as the server received it, which it prints as JSON.
          const rawResult = /"io\.modelcontextprotocol\/related-task": \{\s*"taskId": "([^"]+)"/.exec(text)?.[1];
          return { clientTaskId: created, polls, serverTaskId: serverId, serverSawRelated: rawResult, text: text.slice(0, 600), content: r.content };
        });
        seen(kind === "sampling" ? "Sampling" : "Elicitation", direct, without(dv, "content"));
        seen(kind === "sampling" ? "Sampling" : "Elicitation", agg, without(av, "content"));
        assert(dv.serverTaskId === dv.clientTaskId, `direct: the server says it created ${short(dv.serverTaskId)}, the client created ${dv.clientTaskId}`);
        assert(dv.serverSawRelated === dv.clientTaskId, `direct: the server saw tasks/result related-task ${short(dv.serverSawRelated)}`);
        assert(av.serverTaskId === av.clientTaskId,
          `aggregator: the server knows the client's task as ${short(av.serverTaskId)}, the client created ${av.clientTaskId} (the client's ids pass through unchanged)`);
        assert(av.serverSawRelated === av.clientTaskId, `aggregator: the server's tasks/result related-task was ${short(av.serverSawRelated)}, the client's task is ${av.clientTaskId}`);
        const dd = diff(av.polls.map((p) => p.method), dv.polls.map((p) => p.method));
        assert(dd === undefined, `the server's polls differ: aggregator ${short(av.polls)}, direct ${short(dv.polls)}`);
        const dc = diff(av.content, dv.content);
        assert(dc === undefined, `${tool}'s result content differs from direct (aggregator left, direct right): ${dc}`);
      });
    };
    await clientTaskCheck("client-task-sampling", "trigger-sampling-request-async", { prompt: SAMPLE_PROMPT, maxTokens: 20 }, "sampling",
      "[COMPLETED] Async sampling completed!");
    await check("client-task-sampling-content", async () => {
      for (const c of both) {
        const s = report.seen[(c === agg ? "aggregator" : "direct") + "Sampling"];
        assert(s?.text?.includes(`interop async sample reply [Resource trigger-sampling-request-async context: ${SAMPLE_PROMPT}]`),
          `${c.label}: the server's result does not carry our sampling reply: ${short(s?.text, 600)}`);
      }
    });
    await clientTaskCheck("client-task-elicitation", "trigger-elicitation-request-async", {}, "elicitation",
      "[COMPLETED] User provided the requested information!");

    await check("unknown-task-ids", async () => {
      // Directly: an id never given is an error.
      const dErr = await direct.rawError("tasks/get", (o) => direct.client.experimental.tasks.getTask("nonsense", o));
      const ids = { nonsense: "nonsense" };
      if (st.get(direct).round) ids.directServersId = st.get(direct).round;
      // A client task's id is the client's own, never a server's task: tasks/get of it is
      // routed as any unknown id.
      const clientTask = report.seen.aggregatorSampling?.clientTaskId;
      if (clientTask) ids.clientTask = clientTask;
      // The child's own id of the cancelled task, as server-everything logged it.
      const m = await agg.waitUntil(() => CANCELLED_LOG.exec(agg.stderrText) ?? undefined, T / 2, "log line naming the cancelled task's own id")
        .catch((e) => { throw new CheckError(`${e.message}: cannot test the child's raw id`); });
      ids.childRawId = m[1];
      const got = {};
      for (const [what, id] of Object.entries(ids)) {
        assert(!st.get(agg).given.has(id), `${what} ${id} is an id the client was given`);
        const e = await agg.rawError("tasks/get", (o) => agg.client.experimental.tasks.getTask(id, o));
        got[what] = { taskId: id, tasksGet: e };
      }
      for (const method of ["tasks/result", "tasks/cancel"]) {
        const fn = method === "tasks/result"
          ? (o) => agg.client.experimental.tasks.getTaskResult("nonsense", CallToolResultSchema, o)
          : (o) => agg.client.experimental.tasks.cancelTask("nonsense", o);
        got.nonsense[method] = await agg.rawError(method, fn);
      }
      report.seen.directUnknownTask = dErr;
      report.seen.aggregatorUnknownTasks = got;
      for (const [what, g] of Object.entries(got)) {
        for (const [k, e] of Object.entries(g)) {
          if (k === "taskId") continue;
          assert(e.code === dErr.code, `aggregator: ${k} of ${what} (${g.taskId}) answered code ${e.code} (${e.message}); direct answers an unknown id with ${dErr.code}`);
        }
      }
    });
  });
}

runMain("tasks.mjs", main);
