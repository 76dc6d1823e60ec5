// SPDX-License-Identifier: GPL-3.0-or-later
//
// Flamenco job type: bake Collision Response of every enabled mesh of a shot to point caches.
// Copy this file to the Manager's "scripts" folder (beside flamenco-manager) and restart it;
// the Flamenco add-on then offers "Collision Response Bake" as a job type. tools/bake.py must
// be where the Workers can read it (the add-on itself must be installed in their Blender, or
// the bpy module used: see docs/farm.md).
//
// One task per object (objects bake in parallel, each to its own PC2 file: the response at a
// frame depends on every frame before it, so one object's frames are never split), then one
// task that attaches every cache to a copy of the shot with a Mesh Cache modifier each.

const JOB_TYPE = {
    label: "Collision Response Bake",
    description: "Bake Collision Response to PC2 point caches, one task per object",
    settings: [
        { key: "blendfile", type: "string", required: true, visible: "web",
          description: "The shot to bake" },
        { key: "objects", type: "string", required: true,
          eval: "','.join(o.name for o in C.scene.objects if o.type == 'MESH' and o.collision_response.enabled)",
          description: "Comma-separated names of the meshes to bake" },
        { key: "frames", type: "string", required: true,
          eval: "f'{C.scene.frame_start}-{C.scene.frame_end}'",
          description: "first-last, e.g. 1-120" },
        { key: "bake_script", type: "string", required: true, default: "{collision_response}/tools/bake.py",
          description: "tools/bake.py as the Workers see it (a two-way variable keeps it per platform)" },
        { key: "cache_dir", type: "string", subtype: "dir_path", required: true, default: "//cache",
          description: "Where the PC2 files go (// is the shot's folder)" },
        { key: "output", type: "string", subtype: "file_path", required: true,
          eval: "bpy.path.abspath('//') + bpy.path.display_name_from_filepath(bpy.data.filepath) + '_baked.blend'",
          description: "The shot with the caches attached" },
    ]
};

function compileJob(job) {
    const settings = job.settings;
    const objects = settings.objects.split(",").map((name) => name.trim()).filter((name) => name);
    if (objects.length == 0) {
        throw "no object to bake: enable Collision Response on a mesh first";
    }
    const cache = (name) => path.join(settings.cache_dir, name + ".pc2");

    const bakes = [];
    for (const name of objects) {
        const task = author.Task(`bake-${name}`, "blender");
        task.addCommand(author.Command("blender-render", {
            exe: "{blender}",
            exeArgs: "{blenderArgs}",
            argsBefore: [],
            blendfile: settings.blendfile,
            args: ["--python", settings.bake_script, "--",
                   "--object", name, "--frames", settings.frames,
                   "--to", "point-cache", "--cache", cache(name)],
        }));
        job.addTask(task);
        bakes.push(task);
    }

    // Attach the caches one object after the other, each command saving the output that
    // the next one opens.
    const attach = author.Task("attach-caches", "blender");
    objects.forEach((name, index) => {
        attach.addCommand(author.Command("blender-render", {
            exe: "{blender}",
            exeArgs: "{blenderArgs}",
            argsBefore: [],
            blendfile: index == 0 ? settings.blendfile : settings.output,
            args: ["--python", settings.bake_script, "--",
                   "--object", name, "--attach", "--cache", cache(name), "--output", settings.output],
        }));
    });
    for (const bake of bakes) {
        attach.addDependency(bake);
    }
    job.addTask(attach);
}
