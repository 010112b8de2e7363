"""Blender goes away while the sidecar is rigging: the sidecar must stop the job and exit. Run by
test/blender-safety.test.ts:

  blender -b --factory-startup --python test/blender/quit_during_job.py -- --zip Z --node N --entry E \
      --character C --how quit|stay

Installs the add-on, imports a character and starts an Auto Rig job through the add-on's own client (the same Job the
operators run; background Blender has no event loop for the modal path). Once the sidecar has logged that the job
started, prints `AUTORIG_QUIT {"pid": <sidecar pid>, ...}`. Then:
  quit: the script returns, so Blender quits normally in the middle of the job (the add-on's atexit hook runs);
  stay: the script waits, so the test can kill Blender outright (SIGKILL: no hook runs, only the OS closes the
        sidecar's stdin pipe).
The test then watches the sidecar's pid.
"""

import json
import os
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bare_character import import_gltf_alone  # noqa: E402
from script_run import install_addon, script_args  # noqa: E402

JOB_START_TIMEOUT = 60.0


def parse_args():
    args = script_args("how")
    if args.how not in ("quit", "stay"):
        raise SystemExit("--how: quit or stay, not %r" % args.how)
    return args


def import_character(path):
    import_gltf_alone(path)
    return [o for o in bpy.data.objects if o.type == 'MESH'][0]


def start_rig_job(mesh):
    """An Auto Rig job on the real sidecar, driven until the sidecar logs that it started; returns (job, process)."""
    from autorig import client, messages, operators, scene_io

    objects, counts = scene_io.mesh_objects([mesh])
    request = messages.rig_request(client.new_job_id("rig"), objects, prefix=True)
    job = client.Job(operators.sidecar_config(bpy.context), request,
                     lambda payload: messages.check_rig_result(payload, counts))
    deadline = time.monotonic() + JOB_START_TIMEOUT
    while time.monotonic() < deadline:
        state = job.poll(0.02)
        process = client._managed["process"]
        started = process is not None and any("rig '%s' started" % job.id in line for line in list(process.stderr_tail))
        if started or state in client.TERMINAL:
            return job, process
    return job, client._managed["process"]


def sidecar_running(pid):
    """Whether process `pid` exists and is not a zombie (/proc/<pid>/stat's state)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return not stat[stat.rindex(")") + 2:].startswith("Z")


def main():
    args = parse_args()
    install_addon(args.zip, args.node, args.entry)
    mesh = import_character(args.character)
    job, process = start_rig_job(mesh)
    # Whether the sidecar runs is read here, while the job is known to run: once this script returns ("quit"),
    # Blender quits at once and the sidecar may be gone before the test reads this line.
    print("AUTORIG_QUIT " + json.dumps({"pid": process.process.pid if process else None, "state": job.state,
                                        "error": job.error, "how": args.how,
                                        "sidecar_running": process is not None and sidecar_running(process.process.pid)}),
          flush=True)
    if args.how == "stay":
        while True:
            time.sleep(1.0)  # until the test kills Blender
    return job


running_job = main()  # kept referenced: Blender quits with the job's connection still open
