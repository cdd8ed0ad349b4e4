//! Text from outside membench (the environment, files, drivers, compilers) on its way to
//! a terminal, a row or a path: which characters it may not carry, how a terminal is
//! shown them, and environment values checked where they are read.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::Path;

/// The most characters an environment value membench takes may have: a DNS name's 253,
/// and a Vulkan adapter's name's 256, fit.
pub(crate) const MAX_VALUE_CHARS: usize = 256;

/// Whether a terminal would act on `c` instead of showing it: a control character (a
/// line break, an ANSI escape) or a bidirectional formatting character (which reorders
/// the text shown around it).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `c`, a character of [`is_unsafe`], as an error names it: `a control character
/// (\u{1b})`.
pub fn named(c: char) -> String {
    let kind = match c.is_control() {
        true => "a control character",
        false => "a bidirectional formatting character",
    };
    format!("{kind} ({})", c.escape_debug())
}

/// `text` as a terminal may show it: each character of [`is_unsafe`] escaped as Rust
/// writes it (`\n`, `\u{1b}`, `\u{202e}`), so that a value can neither start a line of
/// its own nor colour or reorder one.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match is_unsafe(c) {
                true => c.escape_debug().to_string(),
                false => c.to_string(),
            })
            .collect(),
    )
}

/// `text` line by line, each line [`shown`]: a message whose line breaks are its own (a
/// compiler's, an error with a list in it) keeps them, and nothing else.
pub fn shown_lines(text: &str) -> String {
    text.lines().map(shown).collect::<Vec<_>>().join("\n")
}

/// `path` as a terminal may show it.
pub(crate) fn shown_path(path: &Path) -> String {
    shown(&path.display().to_string()).into_owned()
}

/// The value of the environment variable `name`, or `None` where it is unset or blank.
/// White space around it is trimmed: a value from a file or a Kubernetes `ConfigMap`
/// often ends in a line break, and what is meant is plain. Anything else a row, a path
/// or a terminal could not take is refused: the error is one line naming the variable.
pub fn environment(name: &str) -> Result<Option<String>, String> {
    environment_value(name, std::env::var_os(name).as_deref())
}

/// [`environment`] of `value`, as `name` held it.
pub(crate) fn environment_value(
    name: &str,
    value: Option<&OsStr>,
) -> Result<Option<String>, String> {
    let Some(value) = value else {
        return Ok(None);
    };
    let refused = |why: String| format!("{name}: {why}");
    let Some(text) = value.to_str() else {
        return Err(refused(format!(
            "not UTF-8 ({})",
            shown(&value.to_string_lossy())
        )));
    };
    let text = text.trim();
    if let Some(why) = unfit(text) {
        return Err(refused(format!("{why} in \"{}\"", shown(text))));
    }
    Ok((!text.is_empty()).then(|| text.to_owned()))
}

/// Why `text` may not stand in a row, a path or a terminal as a name, if it may not: a
/// character of [`is_unsafe`], or more than [`MAX_VALUE_CHARS`] characters.
pub(crate) fn unfit(text: &str) -> Option<String> {
    if let Some(c) = text.chars().find(|&c| is_unsafe(c)) {
        return Some(named(c));
    }
    let chars = text.chars().count();
    (chars > MAX_VALUE_CHARS)
        .then(|| format!("{chars} characters, more than the {MAX_VALUE_CHARS} membench takes"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_terminal_is_shown_controls_and_bidi_escaped_and_nothing_else() {
        assert_eq!(shown("H100 80GB, 5 %"), "H100 80GB, 5 %");
        assert_eq!(
            shown("ok\nhealth: 9 cases, healthy\u{1b}[2K"),
            "ok\\nhealth: 9 cases, healthy\\u{1b}[2K"
        );
        assert_eq!(shown("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(shown_lines("one\r\ntwo\u{7}"), "one\ntwo\\u{7}");
    }

    #[test]
    fn an_environment_value_is_trimmed_or_refused_naming_its_variable() {
        let value = |text: &str| environment_value("MEMBENCH_HOST", Some(OsStr::new(text)));
        assert_eq!(value("node-7\n").unwrap().as_deref(), Some("node-7"));
        assert_eq!(value(" \n").unwrap(), None);
        assert_eq!(environment_value("MEMBENCH_HOST", None).unwrap(), None);
        for (text, why) in [
            ("node\u{1b}[31m-7", "a control character (\\u{1b})"),
            ("node\n-7", "a control character (\\n)"),
            ("node\u{2066}-7", "a bidirectional formatting character"),
            (&"n".repeat(300), "300 characters, more than the 256"),
        ] {
            let message = value(text).unwrap_err();
            assert!(message.starts_with("MEMBENCH_HOST: "), "{message}");
            assert!(
                message.contains(why) && !message.contains('\n'),
                "{message}"
            );
        }
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt as _;
            let bytes = OsStr::from_bytes(b"node-\xff");
            let message = environment_value("MEMBENCH_HOST", Some(bytes)).unwrap_err();
            assert!(message.contains("not UTF-8"), "{message}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn any_environment_value_is_taken_clean_or_refused_in_one_line(
            value in "\\PC{0,8}[\\x00-\\x1f\\x7f\\u{85}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069} a-z\\n]{0,6}\\PC{0,8}"
        ) {
            match environment_value("MEMBENCH_HOST", Some(OsStr::new(&value))) {
                Ok(Some(taken)) => {
                    prop_assert_eq!(taken.as_str(), value.trim());
                    prop_assert!(unfit(&taken).is_none());
                    prop_assert_eq!(shown(&taken), taken.as_str());
                }
                Ok(None) => prop_assert!(value.trim().is_empty()),
                Err(message) => {
                    prop_assert!(message.starts_with("MEMBENCH_HOST: "), "{}", message);
                    prop_assert!(!message.chars().any(is_unsafe), "{:?}", message);
                }
            }
        }

        #[test]
        fn shown_text_has_nothing_a_terminal_acts_on(text in "\\PC{0,4}[\\x00-\\x1f\\u{202e}]{0,3}\\PC{0,4}") {
            prop_assert!(!shown(&text).chars().any(is_unsafe));
            prop_assert!(shown_lines(&text).lines().all(|line| !line.chars().any(is_unsafe)));
        }
    }
}
