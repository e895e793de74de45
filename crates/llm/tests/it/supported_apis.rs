//! docs/supported-apis.md is the list the emulation headers give today:
//! a header that adds or drops an API without the page regenerated fails
//! here (`ASCENDOPT_BLESS=1` rewrites the page).

use std::path::Path;

#[test]
fn the_supported_api_page_is_generated_from_the_headers() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/supported-apis.md");
    let want = ascendopt_llm::apis::markdown();
    if std::env::var_os("ASCENDOPT_BLESS").is_some() {
        std::fs::write(&page, &want).unwrap();
        return;
    }
    let have = std::fs::read_to_string(&page).unwrap_or_default();
    assert!(
        have == want,
        "docs/supported-apis.md is stale: run `ASCENDOPT_BLESS=1 cargo test -p ascendopt-llm --test it supported_apis`"
    );
}
