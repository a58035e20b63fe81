//! Tool results that hold more than one string: text with an image, several text
//! blocks, text with a document, as Anthropic's `tool_result.content` carries them.
//!
//! Guarantee: the blocks are a function of the decisions drawn here (the image's
//! pixel and the number of parts), so a seed and a replay build the same bytes; and
//! every result starts with a text block holding the tool's one-line output, so a
//! reader of text alone still finds the words a string result would have held.
//!
//! Why: real tools (screenshots, MCP servers, file readers) answer with blocks, and
//! runtimes that join them to a string, drop the image or stringify the array send
//! the model another observation than the tool made. The image is a real PNG (a
//! 1×1 pixel, its CRCs and zlib checksum computed), so an engine or framework that
//! decodes it sees a valid image, not bytes that only look like base64.

use crate::decide::Decider;
use turnsim_core::{Block, ToolResultContent};

/// The shapes, in the order the decision picks them.
const SHAPES: u32 = 3;

/// A tool's answer as blocks: `[text, image]`, `[text, text, …]` (two to four) or
/// `[text, document]`, picked by one decision.
pub(super) fn result_blocks(d: &mut Decider, name: &str, id: &str) -> ToolResultContent {
    let head = ["output of ", name, " for ", id].concat();
    let blocks = match d.below(SHAPES) {
        0 => {
            let rgb = [d.below(256) as u8, d.below(256) as u8, d.below(256) as u8];
            vec![Block::text(head), image(&png_1x1(rgb))]
        }
        1 => {
            let parts = d.range(2, 4);
            let mut blocks = vec![Block::text(head)];
            for part in 2..=parts {
                blocks.push(Block::text(format!("part {part} of {parts} from {id}")));
            }
            blocks
        }
        _ => vec![
            Block::text(head),
            document(&["report of ", name, " for ", id, "\nall checks passed"].concat()),
        ],
    };
    ToolResultContent::Blocks(blocks)
}

fn object(value: serde_json::Value) -> Block {
    match value {
        serde_json::Value::Object(map) => Block::Unknown(map),
        other => Block::text(other.to_string()),
    }
}

/// An `image` block with base64 PNG bytes (kept as an unknown block, as core keeps
/// every kind it does not read).
fn image(png: &[u8]) -> Block {
    object(serde_json::json!({
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": crate::base64::encode(png)},
    }))
}

/// A `document` block with a plain-text source, as a file-reading tool returns one.
fn document(text: &str) -> Block {
    object(serde_json::json!({
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
    }))
}

/// A 1×1 RGB PNG of one pixel: signature, IHDR, one stored-deflate IDAT, IEND.
pub(crate) fn png_1x1(rgb: [u8; 3]) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    // Width 1, height 1, 8 bits, colour type 2 (RGB), default compression/filter/interlace.
    chunk(&mut png, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
    // One scanline: filter byte 0, then the pixel.
    let raw = [0, rgb[0], rgb[1], rgb[2]];
    let mut z = vec![0x78, 0x01, 0x01];
    let len = raw.len() as u16;
    z.extend_from_slice(&len.to_le_bytes());
    z.extend_from_slice(&(!len).to_le_bytes());
    z.extend_from_slice(&raw);
    z.extend_from_slice(&adler32(&raw).to_be_bytes());
    chunk(&mut png, b"IDAT", &z);
    chunk(&mut png, b"IEND", &[]);
    png
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in bytes {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_gives_the_published_check_value() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn a_pixel_is_a_72_byte_png_with_the_published_ihdr_and_iend_chunks() {
        let png = png_1x1([255, 0, 0]);
        assert_eq!(png.len(), 72);
        assert_eq!(
            &png[..33],
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0\x90wS\xde"
        );
        assert_eq!(&png[60..], b"\0\0\0\0IEND\xaeB`\x82");
    }
}
