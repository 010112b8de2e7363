"""What the Blender test scripts that import a real character share.

`import_gltf_alone(path)` empties the scene's objects (the add-on and its preferences stay) and imports a .glb with
Blender's glTF importer. `import_bare_hero(path)` does that with a rigged .glb and strips the rig: the mesh keeps its
bind-pose shape and world placement, loses its Armature modifier, parent and vertex groups; every other object and
armature goes. The mesh is renamed "Hero" and returned. Runs inside Blender only.
"""

import bpy


def import_gltf_alone(path):
    """Empty the scene's objects (the add-on and its preferences stay) and import the .glb at path."""
    import numpy as np

    if "bool" not in np.__dict__:
        np.bool = bool  # Debian Blender 3.4's glTF importer needs it with numpy 1.24 (test shim only)
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    bpy.ops.import_scene.gltf(filepath=path)


def strip_rig(obj):
    """Unbind a mesh object from its rig: its Armature modifiers (the stored vertices are the bind pose: the current
    pose is not baked), its parent (its world placement kept) and its vertex groups go."""
    world = obj.matrix_world.copy()
    for modifier in [m for m in obj.modifiers if m.type == 'ARMATURE']:
        obj.modifiers.remove(modifier)
    obj.parent = None
    obj.matrix_world = world
    obj.vertex_groups.clear()


def import_bare_hero(path):
    import_gltf_alone(path)
    hero = [o for o in bpy.data.objects if o.type == 'MESH'][0]
    strip_rig(hero)
    for obj in [o for o in bpy.data.objects if o is not hero]:
        bpy.data.objects.remove(obj)
    for arm in list(bpy.data.armatures):
        bpy.data.armatures.remove(arm)
    hero.name = "Hero"
    return hero
