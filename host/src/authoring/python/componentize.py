"""Builds a Python matcher plugin into a component: run by `assay plugin
build` with the Python of a virtual environment that has the pinned
componentize-py, in a staging folder that holds only the plugin's modules
and the glue (componentize-py snapshots the initialized interpreter, and
with it a listing of every folder on its path), then the folder of the
packages its requirements.txt installs, if any.

    python componentize.py WIT_DIR WORLD OUTPUT SRC_DIR [PACKAGES_DIR]

The path is passed explicitly, so that no site-packages of the build
machine is appended to it (the componentize-py command line appends one).
"""

import sys

import componentize_py

wit, world, out, *path = sys.argv[1:]
componentize_py.componentize(
    wit_path=[wit],
    worlds=[world],
    features=[],
    all_features=False,
    world_module=None,
    python_path=path,
    module_worlds=[],
    app_name="assay_app",
    output_path=out,
    stub_wasi=False,
    import_interface_names=[],
    export_interface_names=[],
    full_names=False,
    intersect_world=None,
)
