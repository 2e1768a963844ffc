// Mastra's own server (@mastra/deployer's Node server: Hono, the routes `mastra start`
// serves) with one agent whose model is the stand-in (standin.mjs) and the `unit_convert`
// tool registered for the tools API.
//
//   node server.mjs --port 4111 [--pg postgres://postgres@127.0.0.1:5432/db]
//
// With --pg the agent has Mastra's memory on PostgreSQL (@mastra/memory + @mastra/pg):
// each run reads the thread's last messages and saves the new ones, as the studio does.
// Without it there is no storage at all. Prints "listening <port>" once it accepts
// requests.

import { parseArgs } from "node:util";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createNodeServer } from "@mastra/deployer/server";
import { Memory } from "@mastra/memory";
import { PostgresStore } from "@mastra/pg";
import { standinModel } from "./standin.mjs";
import { benchSink, unitConvert } from "./tools.mjs";

const { values } = parseArgs({
  options: { port: { type: "string" }, pg: { type: "string" } },
});
const port = Number(values.port);

const storage = values.pg
  ? new PostgresStore({ id: "bench-pg", connectionString: values.pg })
  : undefined;

const benchStreamer = new Agent({
  id: "bench-streamer",
  name: "Bench streamer",
  instructions: "Stream.",
  model: standinModel(),
  tools: { bench_sink: benchSink },
  defaultOptions: { maxSteps: 2 },
  ...(storage ? { memory: new Memory({ storage }) } : {}),
});

const mastra = new Mastra({
  agents: { "bench-streamer": benchStreamer },
  ...(storage ? { storage } : {}),
  logger: false,
  server: { port, host: "127.0.0.1", handleShutdownSignals: false },
});

const server = await createNodeServer(mastra, { tools: { unit_convert: unitConvert } });
server.once("listening", () => console.log(`listening ${port}`));
if (server.listening) console.log(`listening ${port}`);
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
