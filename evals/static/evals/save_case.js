// The chat's "Save as test case": the open thread drafted as a case (its turns, the tool
// calls made as expected calls, the answers given as the script), edited as JSON in a
// dialog, then saved under the thread's agent.
import { api, ApiError } from "../js/lib/api.js";
import { h } from "../js/lib/dom.js";

const app = document.getElementById("chat-app");
const button = document.getElementById("save-test-case");

function problems(err) {
  if (!(err instanceof ApiError) || !err.body) return err.message;
  const listed = (err.body.errors || []).map((e) => `${e.path}: ${e.message}`);
  const fields = Object.values(err.fieldErrors).filter(Boolean);
  return [err.message, ...listed, ...fields].join("\n");
}

function dialogFor(draft) {
  const name = h("input", { name: "name", required: true, maxlength: "200", value: draft.name, "aria-label": "Case name" });
  const spec = h("textarea", { name: "spec", rows: "18", cols: "90", spellcheck: "false", "aria-label": "Case (JSON)" });
  spec.style.width = "100%";
  spec.value = JSON.stringify(draft.spec, null, 2);
  const errors = h("pre", { class: "error-box", hidden: true });
  const done = h("p", { class: "small", hidden: true });
  const save = h("button", { class: "primary", type: "submit" }, "Save");
  const cancel = h("button", { class: "secondary", type: "button" }, "Cancel");
  const form = h("form", { method: "dialog", class: "ev-save-case" },
    h("h2", {}, "Save as test case"),
    h("p", { class: "muted small" }, `For agent ${draft.agent}: the calls this chat made are the expected ones; edit before saving.`),
    h("label", {}, "Name ", name), spec, errors, done, h("div", { class: "actions" }, save, " ", cancel));
  const dialog = h("dialog", { id: "save-case-dialog" }, form);
  cancel.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    errors.hidden = true;
    let parsed;
    try {
      parsed = JSON.parse(spec.value);
    } catch (err) {
      errors.hidden = false;
      errors.textContent = `The case is not JSON: ${err.message}`;
      return;
    }
    try {
      const saved = await api(`/api/agents/${encodeURIComponent(draft.agent)}/tests/`, {
        method: "POST",
        body: { name: name.value, spec: parsed },
      });
      done.hidden = false;
      done.replaceChildren("Saved as ", h("a", { href: "/tests/" }, saved.name), ".");
      dialog.dataset.saved = String(saved.id);
    } catch (err) {
      errors.hidden = false;
      errors.textContent = problems(err);
    }
  });
  return dialog;
}

button?.addEventListener("click", async () => {
  const threadId = app.dataset.thread;
  if (!threadId) return;
  const draft = await api(`/api/threads/${encodeURIComponent(threadId)}/test-case-draft`);
  document.getElementById("save-case-dialog")?.remove();
  const dialog = dialogFor(draft);
  document.body.append(dialog);
  dialog.showModal();
});
