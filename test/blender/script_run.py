"""The end of every Blender test script: run its main(), keep a traceback in the results instead of losing it, stop the
sidecar the add-on started, and print the one line the test reads, `<MARKER> <json>` (test/fixtures/blenderScript.ts)."""

import json
import traceback


def run_and_report(main, results, marker):
    """main: the script's work (fills `results`); results: the dict printed; marker: e.g. "AUTORIG_E2E"."""
    try:
        main()
    except Exception:
        results["exception"] = traceback.format_exc()
    finally:
        try:
            from autorig import client

            client.stop_sidecar()
        except Exception:
            pass
        print(marker + " " + json.dumps(results), flush=True)
