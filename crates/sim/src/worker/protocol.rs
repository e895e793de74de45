//! The bytes exchanged with the worker.
//!
//! Job (parent → worker stdin) and reply (worker → result pipe) have the
//! same frame: 8 magic bytes, a little-endian u64 header length, a bincode
//! header, then the raw tensor bytes one after another. Tensor contents are
//! kept out of the bincode header so that tens of megabytes pass as plain
//! `write`/`read` calls instead of element-by-element serde visits.
//!
//! Normally no tensor bytes follow at all: they sit in the tensor arena
//! ([`super::arena`]) that both processes map, and the headers say so
//! (`in_arena`). The pipe carries them only when no arena could be made.

use crate::launch::{LaunchFailure, LaunchJob, LaunchOutput};
use bincode::Options;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// First bytes of a job: six bytes of kind, two of version. The version
/// changes with the bincode layout of the headers (bincode has no field
/// names: a worker from another build would misread them).
pub(crate) const JOB_MAGIC: [u8; 8] = *b"ASCJOB04";
/// First bytes of a reply (kind and version, as [`JOB_MAGIC`]).
pub(crate) const REPLY_MAGIC: [u8; 8] = *b"ASCRES04";
/// A header larger than this is refused (the bulk data is not in it).
const MAX_HEADER: u64 = 1 << 30;

/// The bincode options of both sides (fixed-width integers, bounded).
fn options(limit: u64) -> impl Options {
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_little_endian()
        .with_limit(limit)
}

/// The job without tensor contents, and their lengths.
#[derive(Serialize, Deserialize)]
struct JobHeader {
    job: LaunchJob,
    input_lens: Vec<u64>,
    output_lens: Vec<u64>,
    /// The contents are in the arena, not after the header.
    in_arena: bool,
}

/// What the worker sends back.
// One reply per worker process: the size of the variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// `launch::run` returned (outputs of an `Ok` travel as bulk data).
    Launch(Result<LaunchOutput, LaunchFailure>),
    /// The worker could not use the job (bad frame, unknown self-test).
    Refused(String),
    /// The simulator itself panicked.
    Panicked(String),
}

#[derive(Serialize, Deserialize)]
struct ReplyHeader {
    reply: Reply,
    output_lens: Vec<u64>,
    /// A finished launch left its outputs in the arena.
    outputs_in_arena: bool,
}

/// A job as the worker received it.
pub(crate) struct ReceivedJob {
    /// The job; its tensors' `data` is empty when `arena_lens` is set.
    pub job: LaunchJob,
    /// The region sizes (inputs, then outputs) when the contents are in
    /// the arena.
    pub arena_lens: Option<Vec<usize>>,
}

/// A job as one header and the borrowed tensor contents that follow it.
pub(crate) struct EncodedJob<'a> {
    /// Magic, length and header.
    pub head: Vec<u8>,
    /// Input then output contents, in order.
    pub bulk: Vec<&'a [u8]>,
}

/// Encodes `job` with its contents in the frame; `job` keeps its data (the
/// frame borrows it).
#[cfg(test)]
pub(crate) fn encode_job(job: &LaunchJob) -> Result<EncodedJob<'_>, FrameError> {
    let inputs: Vec<&[u8]> = job.inputs.iter().map(|t| t.data.as_slice()).collect();
    let outputs: Vec<&[u8]> = job.outputs.iter().map(|t| t.data.as_slice()).collect();
    encode_job_parts(job, &inputs, &outputs, false)
}

/// Encodes `job` with tensor contents given apart (`job`'s own `data` is
/// ignored); one slice per input and per output. With `in_arena` the frame
/// holds only their sizes (the contents are in the arena).
pub(crate) fn encode_job_parts<'a>(
    job: &LaunchJob,
    inputs: &[&'a [u8]],
    outputs: &[&'a [u8]],
    in_arena: bool,
) -> Result<EncodedJob<'a>, FrameError> {
    if inputs.len() != job.inputs.len() || outputs.len() != job.outputs.len() {
        return Err(FrameError::Contents {
            inputs: job.inputs.len(),
            outputs: job.outputs.len(),
            given_inputs: inputs.len(),
            given_outputs: outputs.len(),
        });
    }
    let strip = |t: &crate::launch::JobTensor| crate::launch::JobTensor {
        dtype: t.dtype,
        shape: t.shape.clone(),
        data: Vec::new(),
    };
    let skeleton = LaunchJob {
        host_lib: std::path::absolute(&job.host_lib).unwrap_or_else(|_| job.host_lib.clone()),
        kernel_lib: std::path::absolute(&job.kernel_lib).unwrap_or_else(|_| job.kernel_lib.clone()),
        kernel_name: job.kernel_name.clone(),
        op_type: job.op_type.clone(),
        inputs: job.inputs.iter().map(strip).collect(),
        outputs: job.outputs.iter().map(strip).collect(),
        attrs: job.attrs.clone(),
        platform: job.platform.clone(),
        seed: job.seed,
        max_instrs_per_block: job.max_instrs_per_block,
        knobs: job.knobs.clone(),
        check_in_worker: job.check_in_worker,
        tiling_only: job.tiling_only,
        layout: job.layout.clone(),
        describe: job.describe,
    };
    let header = JobHeader {
        job: skeleton,
        input_lens: inputs.iter().map(|d| d.len() as u64).collect(),
        output_lens: outputs.iter().map(|d| d.len() as u64).collect(),
        in_arena,
    };
    let head = frame(JOB_MAGIC, &header)?;
    let bulk = if in_arena {
        Vec::new()
    } else {
        inputs.iter().chain(outputs).copied().collect()
    };
    Ok(EncodedJob { head, bulk })
}

/// A frame of the worker protocol that cannot be written or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The header does not serialise.
    #[error("cannot encode: {0}")]
    Encode(#[source] bincode::Error),
    /// The stream ended inside a frame.
    #[error("truncated {what}{}", .source.as_ref().map(|e| format!(": {e}")).unwrap_or_default())]
    Truncated {
        /// `frame`, `header` or `tensor data`.
        what: &'static str,
        /// The read error, if the read failed rather than came up short.
        #[source]
        source: Option<io::Error>,
    },
    /// The other side speaks another version of the protocol.
    #[error(
        "frame version {theirs} where this side speaks {ours}: the worker and ascendopt \
         come from different builds (rebuild both, or set ASCENDOPT_WORKER)"
    )]
    Version {
        /// The version in the frame.
        theirs: String,
        /// This side's version.
        ours: String,
    },
    /// The frame does not start with a worker magic.
    #[error("bad magic (not an ascendopt worker frame)")]
    BadMagic,
    /// The header announces more bytes than a header may have.
    #[error("header of {len} bytes is too large")]
    HeaderTooLarge {
        /// The announced length.
        len: u64,
    },
    /// The header does not deserialise.
    #[error("bad header: {0}")]
    BadHeader(#[source] bincode::Error),
    /// Bulk data announced longer than what follows.
    #[error("frame announces {len} bytes but only {available} follow")]
    ShortBulk {
        /// The announced length.
        len: u64,
        /// The bytes that follow.
        available: u64,
    },
    /// A length that does not fit in this process's memory.
    #[error("{len} bytes do not fit in memory")]
    TooLarge {
        /// The announced length.
        len: u64,
    },
    /// The job and the tensor contents given to encode it disagree.
    #[error("the job has {inputs} inputs and {outputs} outputs, {given_inputs} and {given_outputs} contents were given")]
    Contents {
        /// The job's inputs.
        inputs: usize,
        /// The job's outputs.
        outputs: usize,
        /// Input contents given.
        given_inputs: usize,
        /// Output contents given.
        given_outputs: usize,
    },
    /// Bytes after a complete reply.
    #[error("{bytes} unexpected bytes after the reply")]
    Trailing {
        /// How many.
        bytes: usize,
    },
    /// The header and the data (or the arena) disagree.
    #[error("{0}")]
    Inconsistent(&'static str),
}

/// Magic + length + bincode of `value`.
fn frame<T: Serialize>(magic: [u8; 8], value: &T) -> Result<Vec<u8>, FrameError> {
    let body = options(MAX_HEADER)
        .serialize(value)
        .map_err(FrameError::Encode)?;
    let mut out = Vec::with_capacity(16 + body.len());
    out.extend_from_slice(&magic);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Reads magic + length + header from `reader`.
fn read_header<T: for<'de> Deserialize<'de>>(
    reader: &mut impl Read,
    magic: [u8; 8],
) -> Result<T, FrameError> {
    let mut head = [0u8; 16];
    reader
        .read_exact(&mut head)
        .map_err(|e| FrameError::Truncated {
            what: "frame",
            source: Some(e),
        })?;
    if head[..8] != magic {
        if head[..6] == magic[..6] {
            return Err(FrameError::Version {
                theirs: String::from_utf8_lossy(&head[6..8]).into_owned(),
                ours: String::from_utf8_lossy(&magic[6..8]).into_owned(),
            });
        }
        return Err(FrameError::BadMagic);
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&head[8..]);
    let len = u64::from_le_bytes(len_bytes);
    if len > MAX_HEADER {
        return Err(FrameError::HeaderTooLarge { len });
    }
    let mut body = Vec::new();
    reader
        .take(len)
        .read_to_end(&mut body)
        .map_err(|e| FrameError::Truncated {
            what: "header",
            source: Some(e),
        })?;
    if body.len() as u64 != len {
        return Err(FrameError::Truncated {
            what: "header",
            source: None,
        });
    }
    options(len)
        .deserialize(&body)
        .map_err(FrameError::BadHeader)
}

/// Reads `len` bytes of bulk data.
fn read_bulk(
    reader: &mut impl Read,
    len: u64,
    available: Option<u64>,
) -> Result<Vec<u8>, FrameError> {
    if let Some(available) = available {
        if len > available {
            return Err(FrameError::ShortBulk { len, available });
        }
    }
    let len = usize::try_from(len).map_err(|_| FrameError::TooLarge { len })?;
    let mut data = vec![0u8; len];
    reader
        .read_exact(&mut data)
        .map_err(|e| FrameError::Truncated {
            what: "tensor data",
            source: Some(e),
        })?;
    Ok(data)
}

/// Reads a job (worker side).
pub(crate) fn read_job(reader: &mut impl Read) -> Result<ReceivedJob, FrameError> {
    let header: JobHeader = read_header(reader, JOB_MAGIC)?;
    let mut job = header.job;
    if header.input_lens.len() != job.inputs.len() || header.output_lens.len() != job.outputs.len()
    {
        return Err(FrameError::Inconsistent(
            "tensor count does not match the header",
        ));
    }
    if header.in_arena {
        let lens = header
            .input_lens
            .iter()
            .chain(&header.output_lens)
            .map(|&l| usize::try_from(l).map_err(|_| FrameError::TooLarge { len: l }))
            .collect::<Result<Vec<usize>, FrameError>>()?;
        return Ok(ReceivedJob {
            job,
            arena_lens: Some(lens),
        });
    }
    for (tensor, len) in job.inputs.iter_mut().zip(&header.input_lens) {
        tensor.data = read_bulk(reader, *len, None)?;
    }
    for (tensor, len) in job.outputs.iter_mut().zip(&header.output_lens) {
        tensor.data = read_bulk(reader, *len, None)?;
    }
    Ok(ReceivedJob {
        job,
        arena_lens: None,
    })
}

/// Writes a reply (worker side). A finished launch's output contents go as
/// bulk data after the header, or stay in the arena when `outputs_in_arena`
/// (the launch then carries no output contents). Once written, the reply is
/// left to the worker's exit rather than freed.
pub(crate) fn write_reply(
    writer: &mut impl Write,
    reply: Reply,
    outputs_in_arena: bool,
) -> io::Result<()> {
    let outputs_in_arena = outputs_in_arena && matches!(reply, Reply::Launch(Ok(_)));
    let (reply, outputs) = match reply {
        Reply::Launch(Ok(mut output)) => {
            let outputs = std::mem::take(&mut output.outputs);
            (Reply::Launch(Ok(output)), outputs)
        }
        other => (other, Vec::new()),
    };
    let header = ReplyHeader {
        reply,
        output_lens: outputs.iter().map(|o| o.len() as u64).collect(),
        outputs_in_arena,
    };
    let head = frame(REPLY_MAGIC, &header).map_err(io::Error::other)?;
    writer.write_all(&head)?;
    for output in &outputs {
        writer.write_all(output)?;
    }
    writer.flush()?;
    // Not freed (the worker exits next): a kept trace is many small
    // buffers, cheaper to drop with the process.
    std::mem::forget(header);
    Ok(())
}

/// Decodes a complete reply (parent side). `arena_outputs` are the output
/// regions of the job's arena, if it had one: a reply whose outputs stayed
/// there gets copies of them.
pub(crate) fn decode_reply(
    bytes: &[u8],
    arena_outputs: Option<&[&[u8]]>,
) -> Result<Reply, FrameError> {
    let mut reader = bytes;
    let header: ReplyHeader = read_header(&mut reader, REPLY_MAGIC)?;
    let mut reply = header.reply;
    let mut outputs = Vec::with_capacity(header.output_lens.len());
    for len in &header.output_lens {
        let available = reader.len() as u64;
        outputs.push(read_bulk(&mut reader, *len, Some(available))?);
    }
    if !reader.is_empty() {
        return Err(FrameError::Trailing {
            bytes: reader.len(),
        });
    }
    if header.outputs_in_arena {
        if !outputs.is_empty() {
            return Err(FrameError::Inconsistent(
                "output data after a reply whose outputs are in the arena",
            ));
        }
        let regions = arena_outputs.ok_or(FrameError::Inconsistent(
            "the reply's outputs are in an arena the job did not have",
        ))?;
        outputs = regions.iter().map(|r| r.to_vec()).collect();
    }
    match &mut reply {
        Reply::Launch(Ok(output)) => output.outputs = outputs,
        _ if !outputs.is_empty() => {
            return Err(FrameError::Inconsistent(
                "output data after a reply without outputs",
            ))
        }
        _ => {}
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{JobTensor, Platform, TilingInfo};
    use ascendopt_op::Dtype;

    pub(crate) fn platform() -> Platform {
        Platform {
            soc_version: "Ascend910B2".into(),
            core_num_aiv: 48,
            core_num_aic: 24,
            ub_size: 192 * 1024,
            l1_size: 512 * 1024,
            l0a_size: 64 * 1024,
            l0b_size: 64 * 1024,
            l0c_size: 128 * 1024,
            l2_size: 192 << 20,
            hbm_size: 64 << 30,
        }
    }

    fn job() -> LaunchJob {
        LaunchJob {
            host_lib: "/c/host.so".into(),
            kernel_lib: "/c/kernel.so".into(),
            kernel_name: "add_custom".into(),
            op_type: Some("AddCustom".into()),
            inputs: vec![
                JobTensor {
                    dtype: Dtype::Float16,
                    shape: vec![2, 3],
                    data: (0..12).collect(),
                },
                JobTensor {
                    dtype: Dtype::Float32,
                    shape: vec![0],
                    data: vec![],
                },
            ],
            outputs: vec![JobTensor {
                dtype: Dtype::Float16,
                shape: vec![2, 3],
                data: vec![0xAB; 12],
            }],
            attrs: vec![],
            platform: platform(),
            seed: 7,
            max_instrs_per_block: 1000,
            knobs: Vec::new(),
            check_in_worker: false,
            tiling_only: false,
            layout: None,
            describe: false,
        }
    }

    #[test]
    fn a_job_round_trips_with_its_tensor_bytes() {
        let job = job();
        let encoded = encode_job(&job).unwrap();
        let mut bytes = encoded.head.clone();
        for part in &encoded.bulk {
            bytes.extend_from_slice(part);
        }
        assert_eq!(&bytes[..8], b"ASCJOB04");
        // 12 + 0 + 12 bulk bytes follow the header.
        let header_len = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
        assert_eq!(bytes.len(), 16 + header_len + 24);
        let back = read_job(&mut bytes.as_slice()).unwrap();
        assert_eq!(back.job, job);
        assert!(back.arena_lens.is_none());
    }

    #[test]
    fn a_truncated_or_foreign_job_is_an_error() {
        let job = job();
        let encoded = encode_job(&job).unwrap();
        let mut bytes = encoded.head.clone();
        bytes.extend_from_slice(encoded.bulk[0]);
        let err = read_job(&mut bytes.as_slice()).err().unwrap().to_string();
        assert!(err.starts_with("truncated tensor data"), "{err}");
        let err = read_job(&mut &b"GET / HTTP/1.1\r\n\r\n"[..])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("bad magic"), "{err}");
        // A job of another build's protocol version says so.
        let mut other = encoded.head.clone();
        other[6..8].copy_from_slice(b"01");
        let err = read_job(&mut other.as_slice()).err().unwrap().to_string();
        assert!(
            err.contains("frame version 01 where this side speaks 04"),
            "{err}"
        );
    }

    #[test]
    fn an_arena_job_carries_sizes_only_and_its_reply_takes_the_arena_outputs() {
        let job = job();
        let inputs: Vec<&[u8]> = job.inputs.iter().map(|t| t.data.as_slice()).collect();
        let outputs: Vec<&[u8]> = job.outputs.iter().map(|t| t.data.as_slice()).collect();
        let encoded = encode_job_parts(&job, &inputs, &outputs, true).unwrap();
        assert!(encoded.bulk.is_empty());
        let back = read_job(&mut encoded.head.as_slice()).unwrap();
        assert_eq!(back.arena_lens, Some(vec![12, 0, 12]));
        assert!(back.job.inputs.iter().all(|t| t.data.is_empty()));

        let output = LaunchOutput {
            tiling: TilingInfo {
                block_dim: 1,
                tiling_key: 0,
                data: vec![],
                workspace: 0,
                output_init: Vec::new(),
            },
            outputs: vec![],
            trace: Default::default(),
            findings: vec![],
            printed: String::new(),
            hazards: None,
            description: None,
        };
        let mut bytes = Vec::new();
        write_reply(&mut bytes, Reply::Launch(Ok(output)), true).unwrap();
        let region: &[u8] = b"from the arena";
        match decode_reply(&bytes, Some(&[region])).unwrap() {
            Reply::Launch(Ok(back)) => assert_eq!(back.outputs, vec![region.to_vec()]),
            other => panic!("{other:?}"),
        }
        // A reply that says "in the arena" for a job without one is refused.
        let err = decode_reply(&bytes, None).err().unwrap().to_string();
        assert!(err.contains("arena the job did not have"), "{err}");
    }

    #[test]
    fn replies_round_trip_and_garbage_is_rejected() {
        let output = LaunchOutput {
            tiling: TilingInfo {
                block_dim: 8,
                tiling_key: 1,
                data: vec![1, 2, 3, 4],
                workspace: 0,
                output_init: Vec::new(),
            },
            outputs: vec![vec![9; 5], vec![]],
            trace: Default::default(),
            findings: vec![],
            printed: "hello".into(),
            hazards: None,
            description: None,
        };
        let mut bytes = Vec::new();
        write_reply(&mut bytes, Reply::Launch(Ok(output.clone())), false).unwrap();
        match decode_reply(&bytes, None).unwrap() {
            Reply::Launch(Ok(back)) => assert_eq!(back, output),
            other => panic!("{other:?}"),
        }
        // One byte short, one byte too many, or a lying length: refused.
        assert!(decode_reply(&bytes[..bytes.len() - 1], None).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode_reply(&longer, None)
            .unwrap_err()
            .to_string()
            .contains("unexpected bytes"));
        let mut lying = bytes.clone();
        lying[8..16].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
        assert!(decode_reply(&lying, None).is_err());

        let mut bytes = Vec::new();
        write_reply(&mut bytes, Reply::Refused("no".into()), true).unwrap();
        assert!(matches!(decode_reply(&bytes, None).unwrap(), Reply::Refused(m) if m == "no"));
    }
}
