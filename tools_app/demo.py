"""Demo tools that work offline: a unit converter and a weather lookup over built-in data."""

from __future__ import annotations

from typing import Any

from tools_app.definitions import create_tool

_LENGTH_M = {
    "mm": 0.001,
    "cm": 0.01,
    "m": 1.0,
    "km": 1000.0,
    "in": 0.0254,
    "ft": 0.3048,
    "yd": 0.9144,
    "mi": 1609.344,
}
_MASS_KG = {"g": 0.001, "kg": 1.0, "lb": 0.45359237, "oz": 0.028349523125, "t": 1000.0}
_TEMPERATURE = {"c", "f", "k"}
UNITS = sorted([*_LENGTH_M, *_MASS_KG, *_TEMPERATURE])


def _to_celsius(value: float, unit: str) -> float:
    return {"c": value, "f": (value - 32) * 5 / 9, "k": value - 273.15}[unit]


def _from_celsius(value: float, unit: str) -> float:
    return {"c": value, "f": value * 9 / 5 + 32, "k": value + 273.15}[unit]


def convert_units(data: dict[str, Any], context: Any = None) -> dict[str, Any]:
    value, source, target = float(data["value"]), data["from"], data["to"]
    for table in (_LENGTH_M, _MASS_KG):
        if source in table and target in table:
            result = value * table[source] / table[target]
            break
    else:
        if source in _TEMPERATURE and target in _TEMPERATURE:
            result = _from_celsius(_to_celsius(value, source), target)
        else:
            raise ValueError(f"Cannot convert {source} to {target}: different quantities.")
    return {"value": round(result, 6), "unit": target}


unit_convert = create_tool(
    id="unit_convert",
    description="Convert a value between units of length, mass or temperature.",
    input_schema={
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The amount to convert."},
            "from": {"type": "string", "enum": UNITS},
            "to": {"type": "string", "enum": UNITS},
        },
        "required": ["value", "from", "to"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {"value": {"type": "number"}, "unit": {"type": "string"}},
        "required": ["value", "unit"],
    },
    execute=convert_units,
)

WEATHER = {
    "paris": {"temp_c": 14.0, "conditions": "light rain", "humidity": 81, "wind_kph": 17},
    "london": {"temp_c": 11.5, "conditions": "overcast", "humidity": 77, "wind_kph": 21},
    "tokyo": {"temp_c": 19.0, "conditions": "clear", "humidity": 55, "wind_kph": 9},
    "new york": {"temp_c": 8.0, "conditions": "windy", "humidity": 48, "wind_kph": 32},
    "sydney": {"temp_c": 24.5, "conditions": "sunny", "humidity": 60, "wind_kph": 12},
    "nairobi": {"temp_c": 22.0, "conditions": "partly cloudy", "humidity": 58, "wind_kph": 14},
}


def lookup_weather(data: dict[str, Any], context: Any = None) -> dict[str, Any]:
    city = data["city"].strip().lower()
    if city not in WEATHER:
        known = ", ".join(sorted(name.title() for name in WEATHER))
        raise LookupError(f"No weather data for {data['city']!r}. Known cities: {known}.")
    report = dict(WEATHER[city])
    if data.get("units", "metric") == "imperial":
        report["temp_f"] = round(report.pop("temp_c") * 9 / 5 + 32, 1)
    return {"city": data["city"].strip().title(), **report}


weather_lookup = create_tool(
    id="weather_lookup",
    description="Current weather for a city (built-in demo data, works offline).",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris."},
            "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
    output_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "temp_c": {"type": "number"},
            "temp_f": {"type": "number"},
            "conditions": {"type": "string"},
            "humidity": {"type": "integer"},
            "wind_kph": {"type": "number"},
        },
        "required": ["city", "conditions"],
    },
    execute=lookup_weather,
)
