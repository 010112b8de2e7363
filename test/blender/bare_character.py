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


def import_bare_hero(path):
    import_gltf_alone(path)
    hero = [o for o in bpy.data.objects if o.type == 'MESH'][0]
    world = hero.matrix_world.copy()
    for modifier in [m for m in hero.modifiers if m.type == 'ARMATURE']:
        hero.modifiers.remove(modifier)
    hero.parent = None
    hero.matrix_world = world
    hero.vertex_groups.clear()
    for obj in [o for o in bpy.data.objects if o is not hero]:
        bpy.data.objects.remove(obj)
    for arm in list(bpy.data.armatures):
        bpy.data.armatures.remove(arm)
    hero.name = "Hero"
    return hero
