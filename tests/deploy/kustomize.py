"""A small kustomize renderer, enough for deploy/kubernetes/ (kubectl and kustomize are not
installed where the tests run).

It supports what the base and the overlays use, and refuses anything else in a
kustomization (an unknown field is an error, not silently ignored):
- `resources`: YAML files (every document in them) and directories holding a
  kustomization.yaml (rendered first, as kustomize does);
- `namespace`: set on every object;
- `images`: `name` -> `newName` / `newTag` / `digest` on every container image;
- `replicas`: `name` -> `count` on the named Deployment;
- `patches` with `path`: strategic-merge patches, matched to their target by kind and
  name. The merge is the simple part of Kubernetes' strategic merge: maps merge key by
  key, lists of maps that all have a `name` merge item by item on it (containers, env,
  volumes, ports), any other list is replaced, and a null value deletes the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

SUPPORTED = {"apiVersion", "kind", "resources", "namespace", "images", "replicas", "patches"}


class KustomizeError(ValueError):
    pass


def render(directory: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize directory` would print, in resource order."""
    path = directory / "kustomization.yaml"
    kustomization = yaml.safe_load(path.read_text())
    unknown = set(kustomization) - SUPPORTED
    if unknown:
        raise KustomizeError(f"{path}: not supported here: {', '.join(sorted(unknown))}")
    objects: list[dict[str, Any]] = []
    for entry in kustomization.get("resources", []):
        target = (directory / entry).resolve()
        objects.extend(render(target) if target.is_dir() else load(target))
    for patch in kustomization.get("patches", []):
        for document in load(directory / patch["path"]):
            patch_apply(objects, document)
    for image in kustomization.get("images", []):
        for container in containers(objects):
            container["image"] = image_replace(container["image"], image)
    for replica in kustomization.get("replicas", []):
        find(objects, kind="Deployment", name=replica["name"])["spec"]["replicas"] = replica[
            "count"
        ]
    if "namespace" in kustomization:
        for obj in objects:
            obj["metadata"]["namespace"] = kustomization["namespace"]
    return objects


def load(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise KustomizeError(f"{path}: no such file")
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def find(objects: list[dict[str, Any]], *, kind: str, name: str) -> dict[str, Any]:
    for obj in objects:
        if obj["kind"] == kind and obj["metadata"]["name"] == name:
            return obj
    raise KustomizeError(f"no {kind} named {name!r}")


def patch_apply(objects: list[dict[str, Any]], patch: dict[str, Any]) -> None:
    target = find(objects, kind=patch["kind"], name=patch["metadata"]["name"])
    merged = strategic_merge(target, patch)
    target.clear()
    target.update(merged)


def strategic_merge(base: Any, patch: Any) -> Any:
    if isinstance(base, dict) and isinstance(patch, dict):
        merged = dict(base)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = strategic_merge(base[key], value) if key in base else value
        return merged
    if _named_list(base) and _named_list(patch):
        merged_items = [dict(item) for item in base]
        for item in patch:
            same = [i for i, old in enumerate(merged_items) if old["name"] == item["name"]]
            if same:
                merged_items[same[0]] = strategic_merge(merged_items[same[0]], item)
            else:
                merged_items.append(item)
        return merged_items
    return patch


def _named_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(i, dict) and "name" in i for i in value)


def pod_spec(obj: dict[str, Any]) -> dict[str, Any] | None:
    if obj["kind"] in ("Deployment", "Job", "StatefulSet", "DaemonSet"):
        return obj["spec"]["template"]["spec"]
    return None


def containers(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for obj in objects:
        spec = pod_spec(obj)
        if spec:
            found.extend(spec.get("initContainers", []) + spec["containers"])
    return found


def image_replace(reference: str, image: dict[str, Any]) -> str:
    """`name[:tag][@digest]` with kustomize's `images` entry applied when `name` matches."""
    name, digest = reference.partition("@")[0], reference.partition("@")[2]
    last_colon = name.rfind(":")
    tag = ""
    if last_colon > name.rfind("/"):
        name, tag = name[:last_colon], name[last_colon + 1 :]
    if name != image["name"]:
        return reference
    name = image.get("newName", name)
    if "digest" in image:
        return f"{name}@{image['digest']}"
    tag = image.get("newTag", tag)
    suffix = f"@{digest}" if digest and "newTag" not in image else ""
    return f"{name}:{tag}{suffix}" if tag else f"{name}{suffix}"
