"""Thread signals, message queueing and the notification inbox (docs/signals.md).

services: send_message, queue_message, send_signal, send_state_signal,
send_notification_signal, subscribe_to_thread; delivery: the two hooks the run loop calls
(signals_drain_for_run before each model call, signals_on_run_end when a run ends),
registered with runtime/run/plugins.py when the app is ready.
"""
