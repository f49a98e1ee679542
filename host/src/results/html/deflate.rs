//! Raw deflate as a writer: the page's data is compressed as it is
//! written, straight into the page, so a report never holds the whole
//! JSON of a large run, nor its compressed form.

use miniz_oxide::deflate::core::{
    CompressorOxide, TDEFLFlush, TDEFLStatus, compress, create_comp_flags_from_zip_params,
};
use std::io;

/// How much output one call of the compressor may write.
const CHUNK: usize = 64 << 10;

/// Compresses what is written to it into `sink`, as raw deflate (what
/// `DecompressionStream("deflate-raw")` reads); [`Deflater::finish`] ends
/// the stream and gives the sink back.
pub(super) struct Deflater<W: io::Write> {
    compressor: Box<CompressorOxide>,
    chunk: Vec<u8>,
    sink: W,
}

impl<W: io::Write> Deflater<W> {
    /// A compressor at `level` (0-10) writing into `sink`.
    pub(super) fn new(sink: W, level: u8) -> Deflater<W> {
        // A window of 0 bits asks for no zlib header: raw deflate.
        let flags = create_comp_flags_from_zip_params(i32::from(level), 0, 0);
        Deflater { compressor: Box::new(CompressorOxide::new(flags)), chunk: vec![0; CHUNK], sink }
    }

    /// Compresses `input`, ending the stream when `flush` is `Finish`.
    fn push(&mut self, mut input: &[u8], flush: TDEFLFlush) -> io::Result<()> {
        loop {
            let (status, read, written) = compress(&mut self.compressor, input, &mut self.chunk, flush);
            self.sink.write_all(&self.chunk[..written])?;
            input = &input[read..];
            match status {
                TDEFLStatus::Done => return Ok(()),
                TDEFLStatus::Okay if input.is_empty() && !matches!(flush, TDEFLFlush::Finish) => return Ok(()),
                TDEFLStatus::Okay => {}
                status => return Err(io::Error::other(format!("the compressor failed: {status:?}"))),
            }
        }
    }

    /// Ends the stream; the sink, with all of it.
    pub(super) fn finish(mut self) -> io::Result<W> {
        self.push(&[], TDEFLFlush::Finish)?;
        Ok(self.sink)
    }
}

impl<W: io::Write> io::Write for Deflater<W> {
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
        let mut deflater = Deflater::new(Vec::new(), 6);
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
