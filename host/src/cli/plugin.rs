//! `assay plugin new [--python] NAME` and `assay plugin build [DIR]`: the flags as
//! [`crate::authoring`] options, and what it made printed; `assay plugin
//! add|update|publish`: community plugins by reference, through
//! [`Project::add_plugin`], [`Project::update_plugins`] and
//! [`Project::publish_plugin`], and what they did printed.

use super::CliError;
use super::args::{PluginAddArgs, PluginBuildArgs, PluginCommand, PluginNewArgs, PluginPublishArgs, PluginUpdateArgs};
use crate::authoring::{BuildOptions, ScaffoldOptions, SdkDependency, build, scaffold, scaffold_python};
use crate::project::Project;
use crate::project::{AddPlugin, CommunityPlugin};
use anyhow::Result;
use std::path::PathBuf;

pub fn run(command: PluginCommand) -> Result<u8> {
    match command {
        PluginCommand::New(args) => new(args),
        PluginCommand::Build(args) => build_crate(args),
        PluginCommand::Add(args) => add(args),
        PluginCommand::Update(args) => update(args),
        PluginCommand::Publish(args) => publish(args),
    }
}

fn new(args: PluginNewArgs) -> Result<u8> {
    if args.python {
        return new_python(args);
    }
    let sdk = match args.sdk.as_deref() {
        None | Some("vendored") => SdkDependency::Vendored,
        Some("registry") => SdkDependency::registry(),
        Some(path) => SdkDependency::Path(PathBuf::from(path)),
    };
    let vendored = sdk == SdkDependency::Vendored;
    let made = scaffold(ScaffoldOptions { name: args.name, dir: args.dir, sdk }).map_err(CliError::from)?;
    let (name, dir) = (&made.name, made.dir.display());
    println!("Created the plugin crate `{name}` in {dir} with the key `{}`.", made.key);
    if vendored {
        println!(
            "It builds with the SDK this assay carries, in {dir}/vendor/assay-plugin-sdk: commit it with the plugin."
        );
    }
    println!("Next:");
    println!("  cd {dir}");
    println!("  cargo test            # runs its unit tests natively");
    println!("  assay plugin build    # builds {name}.wasm and prints how to load it");
    Ok(crate::exit_codes::OK)
}

fn new_python(args: PluginNewArgs) -> Result<u8> {
    let made = scaffold_python(&args.name, args.dir).map_err(CliError::from)?;
    let (name, key, dir) = (&made.name, &made.key, made.dir.display());
    println!("Created the Python plugin `{name}` in {dir} with the key `{key}` ({key}.py).");
    println!("Next:");
    println!("  cd {dir}");
    println!("  python3 -m unittest   # runs its unit tests");
    println!("  assay plugin build    # builds {name}.wasm with componentize-py and prints how to load it");
    println!("({key}.py runs as a script too: python3 {key}.py \"output\" '{{\"expected\": \"...\"}}')");
    Ok(crate::exit_codes::OK)
}

fn build_crate(args: PluginBuildArgs) -> Result<u8> {
    let mut options = BuildOptions::new(args.dir.unwrap_or_else(|| PathBuf::from(".")));
    options.target_dir = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from);
    let built = build(options, |step| eprintln!("{step}")).map_err(CliError::from)?;
    let keys: Vec<&str> = built.keys.iter().map(|k| k.key.as_str()).collect();
    println!("{}", built.component.strip_prefix(".").unwrap_or(&built.component).display());
    println!("sha256 {}", built.sha256);
    println!("{} {} provides: {}", built.name, built.version, keys.join(", "));
    let path = std::fs::canonicalize(&built.component).unwrap_or_else(|_| built.component.clone());
    println!("Load it with `--plugin {}`, or in assay.toml:", path.display());
    println!("  [plugins.{}]", built.name);
    println!("  path = {:?}", path.display().to_string());
    println!("  sha256 = {:?}", built.sha256);
    Ok(crate::exit_codes::OK)
}

fn add(args: PluginAddArgs) -> Result<u8> {
    let project = super::project::open(&args.project, None, None)?;
    let request =
        AddPlugin { reference: args.reference, label: args.name, grants: args.grants, cosign_key: args.cosign_key };
    let plugin = project.add_plugin(&request).map_err(CliError::from)?;
    println!("Fetched {}", plugin.fetched.pinned);
    describe(&plugin);
    println!("Added [plugins.{}] to {}:", plugin.label, project.config_file().display());
    let written = std::fs::read_to_string(project.config_file()).unwrap_or_default();
    for line in entry_lines(&written, &plugin.label) {
        println!("  {line}");
    }
    Ok(crate::exit_codes::OK)
}

fn update(args: PluginUpdateArgs) -> Result<u8> {
    let project = super::project::open(&args.project, None, None)?;
    let updates = project.update_plugins(&args.names).map_err(CliError::from)?;
    if updates.is_empty() {
        println!("No community plugins (`oci` or `url`) in {}.", project.config_file().display());
    }
    for update in &updates {
        let (label, to) = (&update.label, &update.to);
        match update.changed() {
            false => println!("{label}: up to date ({} {}, sha256 {})", to.name, to.version, to.fetched.sha256),
            true => {
                println!("{label}: updated to {} {} ({})", to.name, to.version, to.fetched.pinned);
                println!("  sha256 {} -> {}", update.from_sha256, to.fetched.sha256);
                describe(to);
            }
        }
    }
    Ok(crate::exit_codes::OK)
}

fn publish(args: PluginPublishArgs) -> Result<u8> {
    let project: Project = super::project::open(&args.project, None, None)?;
    let plugin = project.publish_plugin(&args.reference, &args.component).map_err(CliError::from)?;
    println!("Published {}", plugin.fetched.pinned);
    describe(&plugin);
    println!("Add it to a project with `assay plugin add {}`.", args.reference);
    Ok(crate::exit_codes::OK)
}

/// What a community plugin is, provides and asks for.
fn describe(plugin: &CommunityPlugin) {
    println!("sha256 {}", plugin.fetched.sha256);
    if let Some(key) = &plugin.signed_with {
        println!("signed: a cosign signature by `{}` verified", key.display());
    }
    println!("{} {} provides:", plugin.name, plugin.version);
    let width = plugin.keys.iter().map(|k| k.key.len()).max().unwrap_or(0);
    for key in &plugin.keys {
        println!("  {:<width$}  {}", key.key, key.summary);
    }
    match plugin.requested_grants.as_slice() {
        [] => println!("It asks for no capabilities."),
        asked => println!("It asks for: {}", asked.join(", ")),
    }
}

/// The lines of `[plugins.LABEL]` in the configuration's text.
fn entry_lines<'t>(text: &'t str, label: &str) -> Vec<&'t str> {
    let header = format!("[plugins.{label}]");
    let lines = text.lines().skip_while(|line| line.trim() != header);
    let mut entry: Vec<&str> = Vec::new();
    for line in lines {
        if !entry.is_empty() && line.trim_start().starts_with('[') {
            break;
        }
        entry.push(line);
    }
    while entry.last().is_some_and(|l| l.trim().is_empty()) {
        entry.pop();
    }
    entry
}
