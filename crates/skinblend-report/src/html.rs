//! `index.html`: one self-contained page (inline CSS and script, no network), images referenced
//! by relative paths in the same folder, a caption under each saying what to look at.
//!
//! The page checks itself once loaded: it sets `data-check="ok"` on `<body>` when every image
//! has a natural width above zero and no script error or `console.error` happened, and
//! `data-check="failed"` otherwise, listing `data-broken-images` and `data-errors`; a headless
//! browser's dumped DOM then says whether the report really displays.

use std::fmt::Write as _;

use crate::folder::GENERATOR_META;

/// One block of a section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A paragraph of plain text (escaped).
    Paragraph(String),
    /// A table: a caption, column headers and rows of cells (plain text, escaped).
    Table {
        /// Shown above the table.
        caption: String,
        /// Column headers.
        headers: Vec<String>,
        /// Rows; each as long as `headers`.
        rows: Vec<Vec<String>>,
    },
    /// A link to a file beside the page (a data file), with what it holds.
    Link {
        /// Relative path of the file.
        href: String,
        /// The link's text.
        text: String,
        /// Said after the link.
        description: String,
    },
    /// An image with its caption.
    Figure {
        /// Relative path of the image (a file name in the report's folder).
        src: String,
        /// Alternative text.
        alt: String,
        /// What to look at, shown under the image.
        caption: String,
    },
}

/// A titled section.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// The `<h2>` heading.
    pub heading: String,
    /// The blocks in order.
    pub blocks: Vec<Block>,
}

/// The whole page.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// `<title>` and `<h1>`.
    pub title: String,
    /// A paragraph under the title.
    pub intro: String,
    /// The sections.
    pub sections: Vec<Section>,
}

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attribute values.
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222;line-height:1.4}\
h1{font-size:1.7em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
figure{margin:1.2em 0}figure img{max-width:100%;height:auto;border:1px solid #ddd}\
figcaption{color:#333;max-width:70em;margin-top:.3em}\
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}caption{text-align:left;font-weight:600;padding:.3em 0}\
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right}th{background:#f3f3f3}\
td:first-child,th:first-child{text-align:left}";

/// The self-check; it records errors from the start and judges after `load`.
const CHECK_SCRIPT: &str = r#"(function(){
var errors=[];
window.addEventListener('error',function(e){var t=e.target;errors.push(t&&t.tagName?('failed to load '+(t.src||t.tagName)):String(e.message));},true);
var originalError=console.error;console.error=function(){errors.push(Array.prototype.join.call(arguments,' '));return originalError.apply(console,arguments);};
window.addEventListener('load',function(){
var broken=[];var images=document.images;
for(var i=0;i<images.length;i++){if(!images[i].complete||images[i].naturalWidth===0){broken.push(images[i].getAttribute('src'));}}
var b=document.body;
b.setAttribute('data-images',String(images.length));
b.setAttribute('data-broken-images',broken.join(' '));
b.setAttribute('data-errors',errors.join(' | '));
b.setAttribute('data-check',broken.length===0&&errors.length===0?'ok':'failed');
});
})();"#;

impl Page {
    /// The HTML text.
    #[must_use]
    pub fn render(&self) -> String {
        let mut html = String::new();
        let _ = write!(
            html,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n{GENERATOR_META}\n\
             <title>{}</title>\n<style>{STYLE}</style>\n<script>{CHECK_SCRIPT}</script>\n</head>\n\
             <body data-check=\"pending\">\n<h1>{}</h1>\n<p>{}</p>\n",
            escape(&self.title),
            escape(&self.title),
            escape(&self.intro)
        );
        for section in &self.sections {
            let _ = writeln!(html, "<section>\n<h2>{}</h2>", escape(&section.heading));
            for block in &section.blocks {
                render_block(&mut html, block);
            }
            html.push_str("</section>\n");
        }
        html.push_str("</body>\n</html>\n");
        html
    }

    /// Every image source the page references, in order.
    #[must_use]
    pub fn image_sources(&self) -> Vec<&str> {
        self.sections
            .iter()
            .flat_map(|s| &s.blocks)
            .filter_map(|b| match b {
                Block::Figure { src, .. } => Some(src.as_str()),
                _ => None,
            })
            .collect()
    }
}

fn render_block(html: &mut String, block: &Block) {
    match block {
        Block::Paragraph(text) => {
            let _ = writeln!(html, "<p>{}</p>", escape(text));
        }
        Block::Table {
            caption,
            headers,
            rows,
        } => {
            let _ = write!(
                html,
                "<table>\n<caption>{}</caption>\n<tr>",
                escape(caption)
            );
            for h in headers {
                let _ = write!(html, "<th>{}</th>", escape(h));
            }
            html.push_str("</tr>\n");
            for row in rows {
                html.push_str("<tr>");
                for cell in row {
                    let _ = write!(html, "<td>{}</td>", escape(cell));
                }
                html.push_str("</tr>\n");
            }
            html.push_str("</table>\n");
        }
        Block::Link {
            href,
            text,
            description,
        } => {
            let _ = writeln!(
                html,
                "<p><a href=\"{}\">{}</a>: {}</p>",
                escape(href),
                escape(text),
                escape(description)
            );
        }
        Block::Figure { src, alt, caption } => {
            let _ = writeln!(
                html,
                "<figure>\n<img src=\"{}\" alt=\"{}\">\n<figcaption>{}</figcaption>\n</figure>",
                escape(src),
                escape(alt),
                escape(caption)
            );
        }
    }
}
