//! What a host binds in an exported shader, by the names the translated source gives it, and
//! how those names are found in the text.

use super::language::ShaderLanguage;

/// Where the outputs of [`export_shader`](super::export_shader) put what a host program binds, by the names in the
/// translated source (GLSL names its blocks and varyings itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderInterface {
    /// The palette's name: for GLSL the uniform or storage block's name (bind it with
    /// `glGetUniformBlockIndex` in GLSL ES), otherwise the variable's.
    pub palette: String,
    /// The `clip_from_world` uniform's name (for GLSL its block's).
    pub clip_from_world: String,
    /// The output carrying the skinned position (a GLSL varying name for transform feedback).
    pub position_output: String,
    /// The output carrying the skinned normal.
    pub normal_output: String,
    /// The vertex inputs in location order, each with the name the translated source gives it
    /// (three.js and `glGetAttribLocation` bind GLSL attributes by these names).
    pub inputs: Vec<ShaderInput>,
}

/// One vertex input of an exported shader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderInput {
    /// What it carries: `position`, `normal`, `joints`, `weights`, (CoR) `center` or
    /// (blended) `blend`.
    pub role: &'static str,
    /// Its location (`layout(location = N)`, `@location(N)`, `[[attribute(N)]]`).
    pub location: u32,
    /// Its name in the source: GLSL the `in` variable (naga's `_p2vs_locationN`), HLSL the
    /// semantic (`LOCN`, what a Direct3D input layout names), WGSL and MSL the input struct's
    /// member (those APIs bind by location only).
    pub name: String,
}

/// The name `language`'s translated `source` gives the input at `location` (`role` in WGSL),
/// found in the text; `None` when it is not there.
pub(super) fn input_name(
    language: ShaderLanguage,
    source: &str,
    role: &str,
    location: u32,
) -> Option<String> {
    match language {
        ShaderLanguage::Glsl | ShaderLanguage::GlslEs => {
            let name = format!("_p2vs_location{location}");
            source
                .lines()
                .any(|l| {
                    l.contains(&format!("layout(location = {location}) in "))
                        && l.ends_with(&format!(" {name};"))
                })
                .then_some(name)
        }
        ShaderLanguage::Hlsl => {
            let name = format!("LOC{location}");
            source.contains(&format!(" : {name};")).then_some(name)
        }
        ShaderLanguage::Wgsl => source
            .contains(&format!("@location({location}) {role}:"))
            .then(|| role.to_string()),
        ShaderLanguage::Msl => {
            let marker = format!(" [[attribute({location})]];");
            let line = source.lines().find(|l| l.ends_with(&marker))?;
            let before = line.strip_suffix(&marker)?;
            before.rsplit(' ').next().map(str::to_string)
        }
    }
}
