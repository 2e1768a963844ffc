// Applies the patches of `tool-input-delta` events to a partial value, in place.
//
// A patch is {op: "append", path: [...], value: "text"} (append text to the string at
// path) or {op: "set", path: [...], value: any} (set a value; path [] is the root).
// The server's incremental parser sends only what changed, so applying a patch costs
// time proportional to the patch, never to the size of the value so far: the page never
// re-parses the accumulated argument text.
//
// Strings are immutable in JS, so "in place" means the container that holds the string
// gets the longer string; a patch on the root returns the new root. Always use the
// return value: `value = applyPatches(value, patches)`.

export class PatchError extends Error {}

function containerFor(key) {
  return typeof key === "number" ? [] : {};
}

// Walks to the parent of the last path element, creating containers the server has not
// set yet (a late joiner may see an append before its parent's set).
function parentOf(root, path) {
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i];
    if (node === null || typeof node !== "object") {
      throw new PatchError(`path ${JSON.stringify(path)}: ${JSON.stringify(path.slice(0, i))} is not a container`);
    }
    if (node[key] === undefined || node[key] === null || typeof node[key] !== "object") {
      node[key] = containerFor(path[i + 1]);
    }
    node = node[key];
  }
  if (node === null || typeof node !== "object") {
    throw new PatchError(`path ${JSON.stringify(path)}: parent is not a container`);
  }
  return node;
}

export function applyPatch(root, patch) {
  const path = patch.path || [];
  if (patch.op === "set") {
    if (path.length === 0) return patch.value;
    if (root === null || root === undefined || typeof root !== "object") root = containerFor(path[0]);
    parentOf(root, path)[path[path.length - 1]] = patch.value;
    return root;
  }
  if (patch.op === "append") {
    if (typeof patch.value !== "string") throw new PatchError("append needs a string value");
    if (path.length === 0) return (typeof root === "string" ? root : "") + patch.value;
    if (root === null || root === undefined || typeof root !== "object") root = containerFor(path[0]);
    const parent = parentOf(root, path);
    const key = path[path.length - 1];
    const current = parent[key];
    parent[key] = (typeof current === "string" ? current : "") + patch.value;
    return root;
  }
  throw new PatchError(`unknown patch op ${JSON.stringify(patch.op)}`);
}

export function applyPatches(root, patches) {
  for (const patch of patches || []) root = applyPatch(root, patch);
  return root;
}

// Reads the value at path (undefined when absent); used to refresh one field of a card.
export function valueAt(root, path) {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = node[key];
  }
  return node;
}
