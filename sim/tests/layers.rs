//! The house stays a line: `scripts/layers.py` finds no import circle and no upward
//! import in `core/src` and `sim/src` (docs/architecture.md draws the layers), and the
//! script itself still finds both when they are there, so this test cannot pass by
//! the script going blind.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn layers(root: &Path) -> Output {
    let python = std::env::var("TURNSIM_PYTHON").unwrap_or_else(|_| "python3".into());
    Command::new(&python)
        .arg(repo().join("scripts/layers.py"))
        .arg("--root")
        .arg(root)
        .output()
        .unwrap_or_else(|e| panic!("{python} scripts/layers.py could not start: {e}"))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_crates_have_no_import_circle_and_no_upward_import() {
    let out = layers(&repo());
    assert_eq!(
        out.status.code(),
        Some(0),
        "scripts/layers.py:\n{}",
        text(&out)
    );
    assert_eq!(text(&out), "layers: no circles, no upward imports\n");
}

fn write(root: &Path, rel: &str, body: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
    fs::write(p, body).expect("write");
}

#[test]
fn a_circle_between_siblings_and_a_judge_importing_the_world_are_both_reported() {
    let root = std::env::temp_dir().join(format!("turnsim-layers-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    write(&root, "core/src/lib.rs", "pub mod a;\npub mod b;\n");
    write(&root, "core/src/a.rs", "use crate::b::B;\npub struct A;\n");
    write(
        &root,
        "core/src/b.rs",
        "pub struct B;\nfn f() -> crate::a::A { crate::a::A }\n",
    );
    write(&root, "sim/src/lib.rs", "mod judge;\nmod world;\n");
    // `super::` from a child is an import; the parent's use of its child is not.
    write(
        &root,
        "sim/src/judge/mod.rs",
        "mod rule;\npub use rule::Rule;\n",
    );
    write(
        &root,
        "sim/src/judge/rule.rs",
        "// crate::world::Fake in a comment is no import\npub struct Rule(crate::world::World);\n",
    );
    write(&root, "sim/src/world/mod.rs", "pub struct World;\n");
    let out = layers(&root);
    let said = text(&out);
    let _ = fs::remove_dir_all(&root);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert_eq!(
        said,
        "circle in core/src: 2 files: a.rs, b.rs\n\
         upward import: sim/src/judge/rule.rs:2 (layer 2) -> world/mod.rs (layer 6)\n\
         2 problem(s)\n"
    );
}
