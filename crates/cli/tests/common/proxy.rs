//! A TCP proxy on 127.0.0.1 in front of a test server: it delays each
//! part of the server's answers (a slow server), or cuts every connection
//! (a server gone), as the test asks.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A running proxy; it stops taking connections when dropped.
pub struct Proxy {
    /// Its address, `http://127.0.0.1:PORT`.
    pub endpoint: String,
    state: Arc<State>,
}

struct State {
    delay_ms: AtomicU64,
    cut: AtomicBool,
    stopped: AtomicBool,
}

impl Proxy {
    /// A proxy to `upstream` (`127.0.0.1:PORT`).
    pub fn start(upstream: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let endpoint = format!("http://{}", listener.local_addr().expect("address"));
        let state = Arc::new(State {
            delay_ms: AtomicU64::new(0),
            cut: AtomicBool::new(false),
            stopped: AtomicBool::new(false),
        });
        let (s, upstream) = (Arc::clone(&state), upstream.to_string());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if s.cut.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                pipe(&client, &server, &s, false);
                pipe(&server, &client, &s, true);
            }
        });
        Proxy { endpoint, state }
    }

    /// Delays each part of every answer by `ms` milliseconds.
    pub fn delay(&self, ms: u64) {
        self.state.delay_ms.store(ms, Ordering::SeqCst);
    }

    /// Cuts every connection, open and new: the server is gone.
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.stopped.store(true, Ordering::SeqCst);
        self.cut();
        // Wakes the accepting thread so that it sees `stopped`.
        let _ = TcpStream::connect(self.endpoint.trim_start_matches("http://"));
    }
}

/// Copies `from` into `to` on a thread of its own, delaying each part
/// when `answers` and ending when cut.
fn pipe(from: &TcpStream, to: &TcpStream, s: &Arc<State>, answers: bool) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    let s = Arc::clone(s);
    std::thread::spawn(move || {
        let _ = from.set_read_timeout(Some(Duration::from_millis(100)));
        let mut buf = vec![0u8; 16 << 10];
        loop {
            if s.cut.load(Ordering::SeqCst) {
                break;
            }
            let n = match from.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    continue
                }
                Err(_) => break,
            };
            let delay = s.delay_ms.load(Ordering::SeqCst);
            if answers && delay > 0 {
                std::thread::sleep(Duration::from_millis(delay));
            }
            if to.write_all(&buf[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}
