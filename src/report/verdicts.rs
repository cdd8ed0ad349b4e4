//! The claims on the page: each family's finding, the matrix of verdicts per device and
//! setting, and the claims no device measured.

use maud::{Markup, html};

use crate::results::DeviceResults;
use crate::suite::Family;

use super::claims::{CLAIMS, Cases, Claim, FINDINGS, Kind, Source, Verdict, ratio_text};

/// A family's finding: its headline claim's ratio per device, devices of one shown
/// value and verdict together.
pub(super) fn finding(family: Family, devices: &[&DeviceResults]) -> Markup {
    let Some((headline, claim)) = FINDINGS
        .iter()
        .map(|f| (f, f.claim))
        .find(|(_, claim)| claim.family == family)
    else {
        return html! {};
    };
    let mut groups: Vec<(String, Verdict, Vec<&str>)> = Vec::new();
    for device in devices {
        let verdict = claim.decide(&Cases::new(&device.rows, Source::Measured));
        let shown = verdict.ratio().map_or_else(String::new, ratio_text);
        let same = |(text, other, _): &&mut (String, Verdict, Vec<&str>)| {
            *text == shown && other.label() == verdict.label()
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some((_, _, labels)) => labels.push(&device.label),
            None => groups.push((shown, verdict, vec![&device.label])),
        }
    }
    // A device that could not decide (a partial file) says nothing here.
    if groups
        .iter()
        .any(|(_, v, _)| !matches!(v, Verdict::NotMeasured(_)))
    {
        groups.retain(|(_, v, _)| !matches!(v, Verdict::NotMeasured(_)));
    }
    html! {
        b { (headline.what) } ":"
        @for (shown, verdict, labels) in &groups {
            div class="finding" title=(verdict.detail()) {
                (mark(verdict)) " "
                @if !shown.is_empty() { b { (shown) } " " }
                "on " (labels.join(", "))
            }
        }
    }
}

/// The mark and class of a verdict.
fn verdict_mark(verdict: &Verdict) -> (&'static str, &'static str) {
    match verdict {
        Verdict::Reproduced(_) => ("✓", "yes"),
        Verdict::NotReproduced(_) => ("✗", "no"),
        Verdict::NotMeasured(_) => ("–", "na"),
    }
}

/// A verdict's mark, coloured, its label as the title.
pub(super) fn mark(verdict: &Verdict) -> Markup {
    let (mark, class) = verdict_mark(verdict);
    html! { span class={ "mark " (class) } title=(verdict.label()) { (mark) } }
}

/// The claims as a matrix: a row per claim, a column per device and setting, a mark
/// per cell; the rule and every number folded under the claim.
pub(super) fn claims_matrix(devices: &[DeviceResults], families: &[Family]) -> Markup {
    html! {
        h2 id="claims" { "Claims" } "\n"
        p {
            "Each claim of the classic texts, decided per device by an explicit rule: "
            b { "✓ reproduced" } ", " b { "✗ not reproduced" } ", " b { "– not measured" }
            " (a row the rule needs is absent, skipped or failed); "
            span class="split" { "⚑" } " where another api/build of the device decides the other \
             way (the toolchain, not the memory system, decides there). Open a claim for its rule, \
             the numbers per device and the " i { "model" } "'s verdict (the rule applied to the \
             simulator's predictions). Rules live in " code { "src/report/claims/" } "."
        }
        "\n"
        ol class="devices" {
            @for device in devices { li { (device.label) } }
        }
        "\n"
        div class="scroll" { table class="matrix" {
            "\n"
            tr {
                th { "claim" }
                @for (index, device) in devices.iter().enumerate() {
                    th title=(device.label) { (index + 1) }
                }
            }
            "\n"
            @for family in families {
                tr class="family" { th colspan=(devices.len() + 1) { (family) } } "\n"
                @for claim in CLAIMS.iter().filter(|c| c.family == *family) {
                    (claim_row(claim, devices)) "\n"
                }
            }
        } }
        "\n"
        (absent_claims(families))
    }
}

/// The claims of families no file has: their words only, folded away.
fn absent_claims(families: &[Family]) -> Markup {
    let absent: Vec<&Claim> = CLAIMS
        .iter()
        .filter(|c| !families.contains(&c.family))
        .collect();
    let mut names: Vec<&str> = absent.iter().map(|c| c.family.as_str()).collect();
    names.dedup();
    html! {
        @if !absent.is_empty() {
            details {
                summary {
                    (absent.len()) " more claims, of families no file has (" (names.join(", "))
                    "): not measured on any device"
                }
                "\n"
                div class="scroll" { table {
                    "\n"
                    tr { th { "family" } th { "claim" } th { "rule" } } "\n"
                    @for claim in absent {
                        tr id={ "claim-" (claim.id) } {
                            td { (claim.family) } td { (claim.claim) } td { (claim.rule) }
                        }
                        "\n"
                    }
                } }
                "\n"
            }
            "\n"
        }
    }
}

/// One claim's row: its words (the rule and each device's numbers folded under
/// them), then each device's mark, flagged where one device's settings disagree.
fn claim_row(claim: &Claim, devices: &[DeviceResults]) -> Markup {
    let verdicts: Vec<Verdict> = devices
        .iter()
        .map(|device| claim.decide(&Cases::new(&device.rows, Source::Measured)))
        .collect();
    let split = split_by_setting(devices, &verdicts);
    let predicted = |device: &DeviceResults| {
        (claim.kind == Kind::Bandwidth)
            .then(|| claim.decide(&Cases::new(&device.rows, Source::Predicted)))
    };
    html! {
        tr id={ "claim-" (claim.id) } {
            td {
                details {
                    summary { (claim.claim) }
                    p { "Rule: " (claim.rule) }
                    ul {
                        @for (index, (device, verdict)) in devices.iter().zip(&verdicts).enumerate() {
                            li {
                                (index + 1) ". " (mark(verdict)) " " (verdict.label()) ": "
                                (verdict.detail())
                                @if let Some(model) = predicted(device) {
                                    "; model: " (mark(&model)) " " (model.label())
                                }
                            }
                        }
                    }
                }
            }
            @for (device, verdict) in devices.iter().zip(&verdicts) {
                @let (symbol, class) = verdict_mark(verdict);
                td class={ "verdict " (class) } title={ (device.label) ": " (verdict.label()) " — " (verdict.detail()) } {
                    (symbol)
                    @if split.contains(&device_name(device)) {
                        span class="split" title="another api/build of this device decides the other way" { "⚑" }
                    }
                }
            }
        }
    }
}

pub(super) fn device_name(device: &DeviceResults) -> &str {
    device.metadata().map_or("", |row| row.device.as_str())
}

/// The devices on which one setting reproduces a claim and another does not.
fn split_by_setting<'a>(devices: &'a [DeviceResults], verdicts: &[Verdict]) -> Vec<&'a str> {
    let decided = |name: &str, reproduced: bool| {
        devices.iter().zip(verdicts).any(|(device, verdict)| {
            device_name(device) == name
                && match verdict {
                    Verdict::Reproduced(_) => reproduced,
                    Verdict::NotReproduced(_) => !reproduced,
                    Verdict::NotMeasured(_) => false,
                }
        })
    };
    let mut split: Vec<&str> = devices
        .iter()
        .map(device_name)
        .filter(|name| decided(name, true) && decided(name, false))
        .collect();
    split.dedup();
    split
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Row;
    use crate::suite::Setting;

    #[test]
    fn a_claim_is_flagged_where_the_settings_of_one_device_disagree() {
        let device = |name: &str, setting: Setting| DeviceResults {
            path: "gpu.csv".into(),
            kernel_files: Vec::new(),
            label: name.into(),
            setting,
            rows: vec![Row {
                device: name.into(),
                ..Row::default()
            }],
        };
        let devices = [
            device("A", Setting::WGPU),
            device("A", Setting::TAX_FREE),
            device("B", Setting::WGPU),
            device("B", Setting::TAX_FREE),
        ];
        let verdicts = [
            Verdict::NotReproduced(String::new().into()),
            Verdict::Reproduced(String::new().into()),
            Verdict::Reproduced(String::new().into()),
            Verdict::NotMeasured(String::new()),
        ];
        assert_eq!(split_by_setting(&devices, &verdicts), ["A"]);
    }
}
