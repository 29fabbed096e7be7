// An editor written with the TypeScript ACP SDK (@agentclientprotocol/sdk): spawns
// `wolli --mode acp`, opens a session, sends one prompt, answers the permission question
// with "allow once" and prints what it saw as one JSON line. Run by test_acp_typescript.py.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [python, cwd, prompt, ...wolliArgs] = process.argv.slice(2);
const agent = spawn(python, ["-m", "wolli", "--mode", "acp", ...wolliArgs], {
  cwd, stdio: ["pipe", "pipe", "inherit"],
});
const seen = { chunks: [], permissions: [], toolCalls: [], updates: [] };

const app = client({ name: "ts-test-editor" })
  .onNotification(methods.client.session.update, ({ params }) => {
    const update = params.update;
    seen.updates.push(update.sessionUpdate);
    if (update.sessionUpdate === "agent_message_chunk") seen.chunks.push(update.content.text);
    if (update.sessionUpdate === "tool_call") seen.toolCalls.push({ kind: update.kind, title: update.title });
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    seen.permissions.push({ title: params.toolCall.title, options: params.options.map((o) => o.kind) });
    const allow = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  });

const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const session = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const answer = await ctx.request(methods.agent.session.prompt, {
    sessionId: session.sessionId, prompt: [{ type: "text", text: prompt }],
  });
  return { loadSession: init.agentCapabilities.loadSession, stopReason: answer.stopReason, sessionId: session.sessionId };
});
agent.stdin.end();
const code = await new Promise((resolve) => agent.on("exit", resolve));
process.stdout.write(JSON.stringify({ ...result, ...seen, text: seen.chunks.join(""), exitCode: code }) + "\n");
