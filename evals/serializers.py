"""Input and output shapes of the evals API (the spec itself is checked by evals.spec)."""

from __future__ import annotations

from rest_framework import serializers

from evals.models import Suite, TestCase
from evals.services.suite_runs import MAX_REPEAT


def _id() -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class CaseInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(max_length=10000, allow_blank=True, required=False)
    spec = serializers.JSONField()


class CaseOutputSerializer(serializers.ModelSerializer):
    agent: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )

    class Meta:
        model = TestCase
        fields = ["id", "agent", "name", "description", "spec", "created_at", "updated_at"]


class SuiteInputSerializer(serializers.Serializer):
    agent = serializers.SlugField(max_length=100)
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=100, required=False)
    cases = serializers.ListField(child=_id(), required=False, allow_null=True, max_length=1000)
    repeat = serializers.IntegerField(min_value=1, max_value=MAX_REPEAT, default=1)


class SuiteUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    cases = serializers.ListField(child=_id(), required=False, max_length=1000)
    repeat = serializers.IntegerField(min_value=1, max_value=MAX_REPEAT, required=False)


class SuiteOutputSerializer(serializers.ModelSerializer):
    agent: serializers.SlugRelatedField = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    cases: serializers.PrimaryKeyRelatedField = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )

    class Meta:
        model = Suite
        fields = ["id", "slug", "name", "agent", "cases", "repeat", "created_at"]


class SuiteRunInputSerializer(serializers.Serializer):
    repeat = serializers.IntegerField(min_value=1, max_value=MAX_REPEAT, required=False)


class ImportInputSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=1)
    agent = serializers.CharField(max_length=100, required=False)
    cases = serializers.JSONField()
    suites = serializers.JSONField(required=False)
