// The chat page's frame around the conversation: the thread title (the first message's
// opening, then the model's summary of the first exchange; Rename changes it) and the side column of tasks,
// inbox and stream facts, which narrow screens open and close with a button (the
// navigation's Inbox link opens it on the inbox).

import { api } from "./api.js";

export function mountTitle({ heading, button, threadId, onRenamed }) {
  const refresh = async () => {
    const id = threadId();
    button.hidden = !id;
    if (!id) return;
    const thread = await api(`/api/threads/${id}/`);
    heading.textContent = thread.title || "Untitled chat";
  };
  button.addEventListener("click", async () => {
    const title = prompt("Rename this chat", heading.textContent);
    if (title === null || !title.trim()) return;
    try {
      await api(`/api/threads/${threadId()}/`, { method: "PATCH", body: { title: title.trim() } });
      heading.textContent = title.trim();
      onRenamed();
    } catch (error) {
      alert(`Not renamed: ${error.message}`);
    }
  });
  return { refresh };
}

export function mountSideToggle({ app, button, close, aside }) {
  const set = (open) => {
    app.classList.toggle("aside-open", open);
    button.setAttribute("aria-expanded", String(open));
  };
  button.addEventListener("click", () => set(!app.classList.contains("aside-open")));
  close.addEventListener("click", () => { set(false); button.focus(); });
  aside.addEventListener("keydown", (event) => { if (event.key === "Escape") set(false); });
  if (location.hash === "#inbox-panel") {
    set(true);
    document.getElementById("inbox-panel")?.scrollIntoView({ block: "start" });
  }
}
