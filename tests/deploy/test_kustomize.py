"""The small kustomize renderer the Kubernetes tests use (tests/deploy/kustomize.py)."""

from __future__ import annotations

import pytest

from tests.deploy.kustomize import KustomizeError, image_replace, render, strategic_merge


def test_a_strategic_merge_merges_maps_and_named_lists_and_replaces_other_lists():
    base = {
        "spec": {
            "containers": [{"name": "web", "image": "a", "args": ["x"]}, {"name": "side"}],
            "tolerations": [{"key": "a"}],
            "drop": 1,
        }
    }
    patch = {
        "spec": {
            "containers": [{"name": "web", "args": ["y"]}, {"name": "new"}],
            "tolerations": [{"key": "b"}],
            "drop": None,
        }
    }
    assert strategic_merge(base, patch) == {
        "spec": {
            "containers": [
                {"name": "web", "image": "a", "args": ["y"]},
                {"name": "side"},
                {"name": "new"},
            ],
            "tolerations": [{"key": "b"}],
        }
    }
    assert base["spec"]["containers"][0]["args"] == ["x"]  # the input is left alone


@pytest.mark.parametrize(
    ("reference", "entry", "expected"),
    [
        ("studio:latest", {"name": "studio", "newTag": "1.2"}, "studio:1.2"),
        ("studio", {"name": "studio", "newName": "r.io/s"}, "r.io/s"),
        ("reg:5000/studio:1", {"name": "reg:5000/studio", "newTag": "2"}, "reg:5000/studio:2"),
        ("studio:1", {"name": "studio", "digest": "sha256:ab"}, "studio@sha256:ab"),
        ("other:1", {"name": "studio", "newTag": "2"}, "other:1"),
    ],
)
def test_images_are_replaced_by_name(reference, entry, expected):
    assert image_replace(reference, entry) == expected


def test_it_refuses_what_it_does_not_support(tmp_path):
    (tmp_path / "kustomization.yaml").write_text("resources: []\nnamePrefix: x-\n")
    with pytest.raises(KustomizeError, match="namePrefix"):
        render(tmp_path)


def test_a_patch_needs_its_target_and_a_resource_its_file(tmp_path):
    (tmp_path / "a.yaml").write_text("kind: ConfigMap\nmetadata: {name: a}\ndata: {K: v}\n")
    (tmp_path / "p.yaml").write_text("kind: ConfigMap\nmetadata: {name: b}\ndata: {K: w}\n")
    (tmp_path / "kustomization.yaml").write_text("resources: [a.yaml]\npatches: [{path: p.yaml}]\n")
    with pytest.raises(KustomizeError, match="no ConfigMap named 'b'"):
        render(tmp_path)
    (tmp_path / "kustomization.yaml").write_text("resources: [a.yaml, gone.yaml]\n")
    with pytest.raises(KustomizeError, match="no such file"):
        render(tmp_path)
