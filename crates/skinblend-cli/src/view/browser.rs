//! Opening the viewer's URL in the user's browser, where one may be opened.

/// Whether a browser may be opened: not when asked not to, never under `CI`, and on Linux and
/// the BSDs only with a display.
pub fn may_open(open: bool) -> bool {
    if !open || std::env::var_os("CI").is_some() {
        return false;
    }
    if cfg!(any(target_os = "macos", target_os = "windows")) {
        return true;
    }
    std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
}

/// Starts the platform's URL opener without waiting for it; says so when it cannot.
pub fn open(url: &str) {
    let command = if cfg!(target_os = "macos") {
        std::process::Command::new("open").arg(url).spawn()
    } else if cfg!(target_os = "windows") {
        std::process::Command::new("cmd")
            .args(["/C", "start", "", url])
            .spawn()
    } else {
        std::process::Command::new("xdg-open").arg(url).spawn()
    };
    if let Err(error) = command {
        eprintln!("skinblend: could not open a browser ({error}); open {url} yourself");
    }
}
