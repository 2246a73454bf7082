//! stdio: the gateway on a pair of streams (stdin and stdout), one session on the connection,
//! with every line from the client screened against the [limits](crate::limits) before rmcp
//! parses it.

use tokio_util::sync::CancellationToken;

use crate::gateway::Gateway;

/// Serves one MCP session on stdin and stdout until the client closes stdin or `shutdown` is
/// cancelled. Nothing else may write to stdout meanwhile.
pub async fn serve_stdio(gateway: Gateway, shutdown: CancellationToken) -> std::io::Result<()> {
    serve_stdio_on(gateway, shutdown, tokio::io::stdin(), tokio::io::stdout()).await
}

/// [`serve_stdio`] on any pair of streams. Every line from the client is screened against the
/// [limits](crate::limits) first: one too large or too deep never reaches the parser. A
/// request's id is read from its top level, and the request is replaced by a call that the
/// server answers with an error naming the limit, so the client is answered, not left hanging;
/// a notification (no id) is dropped. Only the input passes through the screen; rmcp writes
/// the output itself.
pub async fn serve_stdio_on(
    gateway: Gateway,
    shutdown: CancellationToken,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    use tokio::io::AsyncWriteExt;
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let mut to_rmcp = to_rmcp;
        let mut reader = tokio::io::BufReader::new(input);
        while let Ok(Some(line)) = read_line_capped(&mut reader).await {
            let (bytes, verdict) = match line {
                Ok(bytes) => {
                    let verdict = crate::limits::screen(&bytes);
                    (bytes, verdict)
                }
                Err((seen, head)) => (head, Err(crate::limits::Oversized::Bytes(seen))),
            };
            let mut forward = match verdict {
                Ok(()) => bytes,
                Err(why) => {
                    tracing::warn!("refused a message from the client: {why}");
                    match crate::limits::substitute(&bytes, &why) {
                        Some(call) => call,
                        None => continue,
                    }
                }
            };
            forward.push(b'\n');
            if to_rmcp.write_all(&forward).await.is_err() {
                break;
            }
        }
        // The client closed stdin: so does the server's side.
        let _ = to_rmcp.shutdown().await;
    });
    let starting = gateway.server().serve((rmcp_in, output));
    let running = tokio::select! {
        r = starting => r.map_err(|e| std::io::Error::other(format!("the MCP client did not initialize: {e}")))?,
        () = shutdown.cancelled() => return Ok(()),
    };
    let cancel = running.cancellation_token();
    tokio::select! {
        r = running.waiting() => {
            r.map_err(std::io::Error::other)?;
        }
        () = shutdown.cancelled() => cancel.cancel(),
    }
    Ok(())
}

/// One line of `reader` without its newline, kept up to [`MAX_MESSAGE_BYTES`](crate::limits::MAX_MESSAGE_BYTES): a longer line
/// is read to its end and reported by its length and its first 64 KiB (`Err`, for its id).
/// `None` at the end of the input.
async fn read_line_capped(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
) -> std::io::Result<Option<Result<Vec<u8>, (usize, Vec<u8>)>>> {
    use tokio::io::AsyncBufReadExt;
    let cap = crate::limits::MAX_MESSAGE_BYTES;
    let mut line = Vec::new();
    let mut seen = 0usize;
    let finish = |seen: usize, mut line: Vec<u8>| {
        if seen > cap {
            line.truncate(64 * 1024);
            Err((seen, line))
        } else {
            Ok(line)
        }
    };
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok((seen > 0).then(|| finish(seen, line)));
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        seen += chunk.len();
        // Past the cap only the head is kept.
        let room = (cap + 1).saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            if seen == 0 {
                continue;
            }
            return Ok(Some(finish(seen, line)));
        }
    }
}
