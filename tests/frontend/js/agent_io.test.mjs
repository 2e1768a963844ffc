// The new-agent page's pure helpers (frontend/static/js/lib/agent_io.js).

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  planSummary, renamesFor, slugify, withIdentity,
} from "../../../frontend/static/js/lib/agent_io.js";

test("a name becomes a slug the API accepts", () => {
  assert.equal(slugify("Trip planner 2!"), "trip-planner-2");
  assert.equal(slugify("  Café  Crème "), "cafe-creme");
  assert.equal(slugify("--x--"), "x");
  assert.equal(slugify(""), "");
});

test("a document takes a new slug and name, and its references follow", () => {
  const document = {
    agent: "trip",
    agents: [
      { slug: "trip", name: "Trip", subagents: [] },
      { slug: "helper", name: "Helper", subagents: [{ key: "back", agent: "trip" }] },
    ],
    tools: [],
  };
  const copy = withIdentity(document, { slug: "mine", name: "Mine" });
  assert.equal(copy.agent, "mine");
  assert.deepEqual(copy.agents.map((a) => [a.slug, a.name]), [["mine", "Mine"], ["helper", "Helper"]]);
  assert.equal(copy.agents[1].subagents[0].agent, "mine");
  assert.equal(document.agents[0].slug, "trip"); // the original is untouched
});

test("renames take what the user typed, else the server's suggestion", () => {
  const clashes = [
    { kind: "agent", name: "trip", suggestion: "trip-2" },
    { kind: "tool", name: "shout", suggestion: "shout_2" },
  ];
  assert.deepEqual(renamesFor(clashes, { "agent:trip": " my-trip " }), {
    agents: { trip: "my-trip" },
    tools: { shout: "shout_2" },
  });
});

test("a plan reads as a short sentence", () => {
  const plan = { agents: [{ slug: "trip" }, { slug: "helper" }], tools: ["shout"] };
  assert.equal(planSummary(plan), "2 agents (trip, helper), 1 tool (shout)");
  assert.equal(planSummary({ agents: [{ slug: "x" }], tools: [] }), "1 agent (x)");
});
