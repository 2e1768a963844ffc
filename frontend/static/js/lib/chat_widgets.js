// The widgets of suspended tool calls, answered in place (docs/runs.md):
// ask_user (free text, single select, multi select), submit_plan (approve / reject with
// a reason), approval of any tool (approve / decline with a reason). Each widget calls
// `submit(payload)`; the page sends it as `{type: "resume", toolCallId, payload}`.
//
// Resume payloads: ask_user {answer: "text"} or {answer: ["a", "b"]} (multi select);
// submit_plan and approvals {approved: true} or {approved: false, reason: "..."}; a widget
// tool's choice list {answer: "value"} or {answer: [...]} (multiple), its form {values}.

import { suspendKind } from "./chat_calls.js";
import { valueNode } from "./chat_render.js";
import { h } from "./dom.js";
import { formatJson } from "./format.js";
import { answerText, choiceControls, formControls, optionOf } from "./widget_kinds.js";

export { suspendKind };

export function askMode(payload) {
  const p = payload || {};
  const mode = String(p.mode || p.selection || p.select || p.type || p.kind || "").toLowerCase();
  if (p.multiple === true || p.multi === true || p.allowMultiple === true || mode.includes("multi")) return "multi";
  if (mode.includes("single") || (Array.isArray(p.options) && p.options.length && !mode.includes("text"))) return "single";
  return "text";
}

function reasonField(placeholder) {
  return h("textarea", { class: "reason", name: "reason", rows: 2, placeholder });
}

// Wraps the controls in a form that locks itself after one answer (no double resume).
function widgetForm(kindClass, title, controls, actions, onSubmit) {
  const error = h("div", { class: "widget-error error", hidden: true });
  const form = h("form", { class: `widget ${kindClass}` }, h("div", { class: "widget-title" }, title), ...controls, error, h("div", { class: "widget-actions" }, ...actions));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const action = event.submitter ? event.submitter.value : "submit";
    const result = onSubmit(action, form);
    if (!result) return;
    if (result.error) {
      error.textContent = result.error;
      error.hidden = false;
      return;
    }
    error.hidden = true;
    form.classList.add("sending");
    for (const control of form.elements) control.disabled = true;
    try {
      await form.submitAnswer(result.payload);
      form.replaceWith(answeredNode(kindClass, result.payload, form.question));
    } catch (err) {
      form.classList.remove("sending");
      for (const control of form.elements) control.disabled = false;
      error.textContent = `Could not send the answer: ${err.message || err}`;
      error.hidden = false;
    }
  });
  return form;
}

function askWidget(payload, { autoResume }) {
  const mode = askMode(payload);
  const question = payload.question ?? payload.prompt ?? payload.message ?? "The agent asks:";
  const options = (payload.options || payload.choices || []).map(optionOf);
  const controls = [];
  if (mode === "text") {
    const text = h("textarea", { name: "answer", rows: 2, placeholder: autoResume ? "Type your answer here or in the message box" : "Type your answer", "aria-label": "Your answer" });
    controls.push(text);
    // Free text with suggested options: a click fills the answer, which stays editable.
    if (options.length) {
      controls.push(h("div", { class: "suggestions" }, options.map((option) => h("button", {
        type: "button", class: "suggestion", onclick: () => { text.value = option.value; text.focus(); },
      }, option.label))));
    }
  } else {
    const type = mode === "multi" ? "checkbox" : "radio";
    const name = `answer-${Math.random().toString(36).slice(2, 8)}`;
    controls.push(h("div", { class: `choices choices-${mode}`, role: mode === "multi" ? "group" : "radiogroup" },
      options.map((option) => h("label", { class: "choice" },
        h("input", { type, name, value: option.value }),
        h("span", { class: "choice-label" }, option.label),
        option.description ? h("span", { class: "choice-description muted" }, option.description) : null))));
  }
  if (mode === "multi") controls.unshift(h("div", { class: "muted widget-hint" }, "Choose one or more."));
  return widgetForm("widget-ask", question, controls,
    [h("button", { type: "submit", class: "primary", value: "answer" }, "Answer")],
    (_action, form) => {
      if (mode === "text") {
        const answer = form.querySelector("textarea[name=answer]").value.trim();
        return answer ? { payload: { answer } } : { error: "Type an answer first." };
      }
      const picked = [...form.querySelectorAll("input:checked")].map((input) => input.value);
      if (!picked.length) return { error: mode === "multi" ? "Choose at least one option." : "Choose an option." };
      return { payload: { answer: mode === "multi" ? picked : picked[0] } };
    });
}

function stepList(steps) {
  return h("ol", { class: "plan-steps" }, steps.map((step) => h("li", {},
    typeof step === "string" ? step : (step.title || step.description || step.step || formatJson(step)))));
}

// submit_plan suspends with {plan: "text", steps: ["..."]}; either may be missing.
function planBody(payload) {
  const { plan, steps } = payload;
  const body = h("div", { class: "plan" });
  if (typeof plan === "string") body.append(h("div", { class: "plan-text value-text" }, plan));
  else if (Array.isArray(plan)) body.append(stepList(plan));
  else if (plan && typeof plan === "object") body.append(Array.isArray(plan.steps) ? stepList(plan.steps) : valueNode(plan));
  // Steps the plan's text already spells out are not listed twice.
  const repeated = typeof plan === "string" && Array.isArray(steps) && steps.every((step) => typeof step === "string" && plan.includes(step));
  if (Array.isArray(steps) && steps.length && !repeated) body.append(stepList(steps));
  if (!body.childElementCount) body.append(valueNode(payload));
  return body;
}

function decisionWidget(kindClass, title, body, approveLabel, rejectLabel) {
  const reason = reasonField(`Why? (the model sees this when you ${rejectLabel.toLowerCase()})`);
  return widgetForm(kindClass, title, [body, reason], [
    h("button", { type: "submit", class: "primary approve", value: "approve" }, approveLabel),
    h("button", { type: "submit", class: "secondary reject", value: "reject" }, rejectLabel),
  ], (action) => {
    const text = reason.value.trim();
    if (action === "approve") return { payload: text ? { approved: true, reason: text } : { approved: true } };
    if (!text) return { error: `Say why you ${rejectLabel.toLowerCase()} — the agent reads it.` };
    return { payload: { approved: false, reason: text } };
  });
}

function genericWidget(payload) {
  const text = h("textarea", { class: "code", name: "payload", rows: 3, placeholder: '{"answer": "..."}' });
  return widgetForm("widget-generic", "This call waits for a resume payload (JSON).", [valueNode(payload), text],
    [h("button", { type: "submit", class: "primary", value: "resume" }, "Resume")],
    () => {
      try {
        return { payload: JSON.parse(text.value || "{}") };
      } catch (err) {
        return { error: `Not JSON: ${err.message}` };
      }
    });
}

// A widget tool's choice list or form ({kind: "widget", widget: {kind, ...}}).
function declaredWidget(payload) {
  const widget = payload.widget && typeof payload.widget === "object" ? payload.widget : {};
  const isForm = widget.kind === "form";
  const { controls, read } = isForm ? formControls(widget) : choiceControls(widget);
  const title = String((isForm ? widget.title : widget.question) ?? "The agent asks:");
  const label = isForm ? String(widget.submit_label || "Submit") : "Answer";
  const form = widgetForm(`widget-declared widget-declared-${isForm ? "form" : "choice"}`, title, controls,
    [h("button", { type: "submit", class: "primary", value: "answer" }, label)], (_action, element) => read(element));
  form.noValidate = true; // read() says what is missing, in the widget's own error line
  return form;
}

// The widget for a suspended call; `submit(payload)` must return a promise.
export function buildWidget({ kind, toolName, payload, input, autoResume = false, submit }) {
  const p = payload && typeof payload === "object" ? payload : { value: payload };
  let form;
  if (kind === "ask") form = askWidget(p, { autoResume });
  else if (kind === "widget") form = declaredWidget(p);
  else if (kind === "plan") form = decisionWidget("widget-plan", p.title || "Approve this plan?", planBody(p), "Approve plan", "Reject");
  else if (kind === "approval") {
    const shown = p.input ?? input;
    form = decisionWidget("widget-approval", p.question || p.message || `Allow ${toolName} to run with this input?`,
      shown === undefined ? h("span") : valueNode(shown), "Approve", "Decline");
  } else form = genericWidget(p);
  form.submitAnswer = submit;
  form.question = p;
  if (autoResume) form.append(h("div", { class: "muted widget-hint" }, "Auto-resume is on: your next chat message answers this call."));
  return form;
}

// The labels of a question's options by value: a chosen option reads as its label.
function optionLabels(question) {
  const q = question && typeof question === "object" ? question : {};
  const widget = q.widget && typeof q.widget === "object" ? q.widget : q;
  const options = widget.options || widget.choices || [];
  return new Map((Array.isArray(options) ? options : []).map(optionOf).map((option) => [option.value, option.label]));
}

// How an answer reads once given (also for answers found in the history); `question` is
// the suspension's payload, whose options name the values chosen.
export function answeredNode(kindClass, payload, question = null) {
  const kind = String(kindClass || "").replace(/^widget-/, "");
  const p = payload && typeof payload === "object" ? payload : { answer: payload };
  let text;
  let tone = "ok";
  if ("approved" in p) {
    const verb = kind === "plan" ? (p.approved ? "Plan approved" : "Plan rejected") : (p.approved ? "Approved" : "Declined");
    text = `${verb}${p.reason ? `: ${p.reason}` : ""}`;
    tone = p.approved ? "ok" : "no";
  } else if (answerText(p)) {
    text = answerText(p);
  } else if ("answer" in p) {
    const labels = optionLabels(question);
    const label = (value) => labels.get(String(value)) ?? value;
    text = `You answered: ${Array.isArray(p.answer) ? p.answer.map(label).join(", ") : label(p.answer)}`;
  } else {
    text = `Resumed with ${formatJson(p)}`;
  }
  return h("div", { class: `answered answered-${tone}` }, text);
}
