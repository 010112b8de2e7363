"""Apply Latent Pose prepared while the user chooses (no bpy here): the add-on sends a pose.prepare for the meshes its
Latent Pose panel shows, so that the sidecar has read them (their latent, their auto-rig) by the time Apply is
clicked. A cold apply of a 50k-vertex mesh took 0.44-0.57 s from the click to the shape key, a reused one 0.16-0.19 s
(`npm run bench -- --only=pose`, 2026-12-03).

PosePreparer decides when: at most one prepare in flight, sent once what the panel shows has stayed the same for
SETTLE seconds (a selection being changed, a transform being dragged, send nothing), never twice for the same meshes,
whatever its outcome (a mesh the sidecar cannot rig is not sent again on every redraw; Apply reports its error). A
prepare in flight is let finish when other meshes are shown meanwhile (theirs is sent after it): cancelling it would
end the sidecar's job thread, and the next job would pay for a new one (about 1 s at 42k vertices, against 0.3).
The meshes are named by a key that the caller makes (prepare_on_show: names, counts, transforms, a geometry counter).
"""

import time

from . import client

__all__ = ["SETTLE", "READ_AHEAD_MAX_VERTICES", "worth_reading_ahead", "PosePreparer"]

# Seconds what the panel shows must stay the same before its meshes are sent: a click on another mesh, a drag, a
# redraw per mouse move all settle first. Short beside the time a user takes to reach the Apply button.
SETTLE = 0.2

# Meshes above this many vertices (all of them together) are not read ahead: the add-on reads them on Blender's main
# thread, where a selection alone must not stall the UI (scene_io.mesh_objects in Blender 3.4 here: 12 ms at 50k
# vertices, 50 ms at 195k, 0.24 s at 772k), and a large scene mesh selected in passing must not cost the sidecar a
# read. Apply still reads them when clicked.
READ_AHEAD_MAX_VERTICES = 300_000


def worth_reading_ahead(vertex_counts):
    """Whether meshes of these vertex counts (an iterable of int, one per mesh) are read ahead: some, and at most
    READ_AHEAD_MAX_VERTICES in all."""
    total = sum(vertex_counts)
    return 0 < total <= READ_AHEAD_MAX_VERTICES


class PosePreparer:
    """At most one pose.prepare in flight, for the meshes last shown once they settled.

    note(key) when the panel shows meshes (key: any hashable naming them exactly, None: nothing to prepare);
    due() says which key to send now; start(key, job) sends it; poll() drives it until it ends.
    """

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self.job = None
        self.job_key = None
        self.done_key = None
        # (client.DONE, checked result) or (client.FAILED / CANCELLED, (code, message)) of the last prepare that ended
        self.outcome = None
        self.pending_key = None
        self._since = 0.0

    def note(self, key):
        """The panel shows the meshes named by `key`. Returns whether a prepare of them is wanted (not sent, not sent
        already, not in flight); a key that changes restarts the wait (SETTLE)."""
        if key is None or key == self.done_key or key == self.job_key:
            self.pending_key = None
            return False
        if key != self.pending_key:
            self.pending_key = key
            self._since = self._clock()
        return True

    def due(self):
        """The key to prepare now: the one noted last, once it has stayed for SETTLE seconds and no prepare is in
        flight; else None."""
        if self.pending_key is None or self.job is not None or self._clock() - self._since < SETTLE:
            return None
        return self.pending_key

    def forget_pending(self):
        """What was noted is no longer shown as it was (the scene moved on): the next note decides again."""
        self.pending_key = None

    def start(self, key, job):
        """Send `job` (a client.Job of a pose.prepare of key's meshes) now; none may be in flight (due() says when)."""
        if self.job is not None:
            raise RuntimeError("a pose.prepare is in flight already")
        self.job, self.job_key = job, key
        self.pending_key = None
        job.send_request()

    def poll(self):
        """Drive the prepare in flight without waiting. Returns whether one is still in flight."""
        job = self.job
        if job is None:
            return False
        state = job.poll(0.0)
        if state not in client.TERMINAL:
            return True
        self.done_key = self.job_key
        self.outcome = (state, job.result if state == client.DONE else job.error)
        job.close()
        self.job, self.job_key = None, None
        return False

    def failed_to_start(self, key, code, message):
        """The prepare of `key` could not be made (the meshes could not be read or are too large): not tried again."""
        self.pending_key = None
        self.done_key = key
        self.outcome = (client.FAILED, (code, message))

    def drop(self):
        """Close the prepare in flight (the sidecar cancels it: an apply it held then does the work itself) and forget
        what is pending; what was done is kept."""
        job, self.job, self.job_key = self.job, None, None
        self.pending_key = None
        if job is not None:
            job.close()

    def reset(self):
        """Forget everything (another file was loaded: the same names may be other meshes)."""
        self.drop()
        self.done_key = None
        self.outcome = None

    def status(self, key):
        """One line for the panel about the meshes `key` names, or None when there is nothing to say (an error is
        not shown here: Apply reports it)."""
        if key is None:
            return None
        if key == self.job_key:
            return "Reading the mesh for posing..."
        if key == self.done_key and self.outcome is not None and self.outcome[0] == client.DONE:
            return "Mesh read: posing is quick"
        return None
