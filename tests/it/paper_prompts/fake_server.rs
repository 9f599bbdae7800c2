//! A canned OpenAI-compatible server on a loopback port: `GET /v1/models` lists one model, and
//! `POST /v1/chat/completions` answers the user message with `reply(prompt)`, recording every
//! prompt it was asked. One request per connection; stops when dropped.

use crate::endpoint::read_request;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub const MODEL: &str = "canned-judge";

pub struct FakeServer {
    port: u16,
    asked: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

type Reply = dyn Fn(&str) -> String + Send + Sync;

impl FakeServer {
    pub fn start(reply: Arc<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (asked2, stop2) = (asked.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (asked, reply) = (asked2.clone(), reply.clone());
                std::thread::spawn(move || serve(conn, &asked, reply.as_ref()));
            }
        });
        FakeServer { port, asked, stop }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The prompts asked so far, in the order they arrived.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(mut conn: TcpStream, asked: &Mutex<Vec<String>>, reply: &Reply) {
    let Some((head, body)) = read_request(&mut conn) else { return };
    let path = head.split_whitespace().nth(1).unwrap_or("");
    let answer = if path.ends_with("/models") {
        serde_json::json!({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
    } else if path.ends_with("/chat/completions") {
        let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let prompt = req["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").unwrap()["content"].as_str().unwrap().to_owned();
        let text = reply(&prompt);
        asked.lock().unwrap().push(prompt);
        serde_json::json!({
            "id": "x", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        })
    } else {
        let _ = write!(conn, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    };
    let body = answer.to_string();
    let _ = write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
}
