//! Raw deflate as a writer: the page's data is compressed as it is
//! written, so a report holds its data compressed (a tenth of it, or
//! less), never the whole JSON of a large run.

use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress, create_comp_flags_from_zip_params,
};
use std::io;

/// How much output one call of the compressor may write.
const CHUNK: usize = 64 << 10;

/// Compresses what is written to it; [`Deflater::finish`] gives the raw
/// deflate stream (what `DecompressionStream("deflate-raw")` reads).
pub(super) struct Deflater {
    compressor: Box<CompressorOxide>,
    out: Vec<u8>,
}

impl Deflater {
    /// A compressor at `level` (0-10).
    pub(super) fn new(level: u8) -> Deflater {
        // A window of 0 bits asks for no zlib header: raw deflate.
        let flags = create_comp_flags_from_zip_params(i32::from(level), 0, 0);
        Deflater { compressor: Box::new(CompressorOxide::new(flags)), out: Vec::new() }
    }

    /// Compresses `input`, ending the stream when `flush` is `Finish`.
    fn push(&mut self, mut input: &[u8], flush: TDEFLFlush) -> io::Result<()> {
        loop {
            let start = self.out.len();
            self.out.resize(start + CHUNK, 0);
            let (status, read, written) = compress(&mut self.compressor, input, &mut self.out[start..], flush);
            self.out.truncate(start + written);
            input = &input[read..];
            match status {
                TDEFLStatus::Done => return Ok(()),
                TDEFLStatus::Okay if input.is_empty() && !matches!(flush, TDEFLFlush::Finish) => return Ok(()),
                TDEFLStatus::Okay => {}
                status => return Err(io::Error::other(format!("the compressor failed: {status:?}"))),
            }
        }
    }

    /// The whole stream, ended.
    pub(super) fn finish(mut self) -> io::Result<Vec<u8>> {
        self.push(&[], TDEFLFlush::Finish)?;
        Ok(self.out)
    }
}

impl io::Write for Deflater {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.push(buf, TDEFLFlush::None)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn written_in_pieces_it_inflates_to_what_was_written() {
        let text: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{{\"case\":{i}}},").into_bytes()).collect();
        let mut deflater = Deflater::new(6);
        for piece in text.chunks(7_919) {
            deflater.write_all(piece).unwrap();
        }
        let deflated = deflater.finish().unwrap();
        assert!(deflated.len() < text.len() / 5, "{} of {}", deflated.len(), text.len());
        assert_eq!(miniz_oxide::inflate::decompress_to_vec(&deflated).unwrap(), text);
        // The same as compressing it whole.
        assert_eq!(deflated, miniz_oxide::deflate::compress_to_vec(&text, 6));
    }
}
