//! Shared by the timeline tests: the picture's SVG parsed as XML, and the check that
//! the file refers to nothing outside itself.
#![allow(dead_code)]

/// The inline `<svg>…</svg>` of a picture.
pub fn svg_text(html: &str) -> &str {
    let start = html.find("<svg").expect("the picture has an inline svg");
    let end = html.find("</svg>").expect("the svg is closed") + "</svg>".len();
    &html[start..end]
}

/// Every `attr="…"` value in the file, in order.
pub fn attribute_values<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let needle = format!("{attr}=\"");
    html.match_indices(&needle)
        .map(|(i, _)| {
            let rest = &html[i + needle.len()..];
            &rest[..rest.find('"').expect("a closed attribute")]
        })
        .collect()
}

/// Asserts the file loads nothing and links nowhere outside itself.
pub fn assert_self_contained(html: &str) {
    for bad in [
        "http://", "https://", "src=", "url(", "@import", "<link", "//cdn",
    ] {
        assert!(!html.contains(bad), "the picture contains {bad:?}");
    }
    for href in attribute_values(html, "href") {
        assert!(
            href.starts_with('#'),
            "href {href:?} points outside the file"
        );
    }
    assert!(
        html.contains("content=\"default-src 'none';"),
        "the picture forbids the browser to fetch anything"
    );
}

/// Lane names, top to bottom.
pub fn lanes(svg: &roxmltree::Document<'_>) -> Vec<String> {
    svg.descendants()
        .filter(|n| n.attribute("class") == Some("lane"))
        .map(|n| n.attribute("data-lane").expect("a named lane").to_owned())
        .collect()
}

/// The hover texts of the elements of `class`.
pub fn titles(svg: &roxmltree::Document<'_>, class: &str) -> Vec<String> {
    svg.descendants()
        .filter(|n| {
            n.attribute("class")
                .is_some_and(|c| c.split(' ').any(|w| w == class))
        })
        .filter_map(|n| n.children().find(|c| c.has_tag_name("title")))
        .map(|t| t.text().unwrap_or_default().to_owned())
        .collect()
}
