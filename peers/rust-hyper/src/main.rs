//! A peer: renard's core route as a hyper user would write it. `GET /` answers 302 to one
//! of N pre-rendered locations; every other path 404. One tokio runtime: current-thread
//! for `--threads 1` (no work stealing on one core), multi-thread otherwise.
//! Usage: renard-hyper --listen HOST:PORT --count N --location TEMPLATE --threads T

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::Empty;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CACHE_CONTROL, LOCATION};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

struct Config {
    listen: SocketAddr,
    threads: usize,
    locations: Vec<HeaderValue>, // index k - 1
}

fn parse_args() -> Result<Config, String> {
    let (mut listen, mut count, mut location, mut threads) = (None, None, None, 1usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag}: missing value"))?;
        match flag.as_str() {
            "--listen" => listen = Some(value.parse().map_err(|e| format!("--listen: {e}"))?),
            "--count" => count = Some(value.parse::<usize>().map_err(|e| format!("--count: {e}"))?),
            "--location" => location = Some(value),
            "--threads" => threads = value.parse().map_err(|e| format!("--threads: {e}"))?,
            _ => return Err(format!("{flag}: unknown flag")),
        }
    }
    let (count, location) = (count.ok_or("--count: missing")?, location.ok_or("--location: missing")?);
    let locations = (1..=count)
        .map(|k| HeaderValue::from_str(&location.replace("{n}", &k.to_string())))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--location: {e}"))?;
    Ok(Config { listen: listen.ok_or("--listen: missing")?, threads: threads.max(1), locations })
}

fn answer(req: &Request<Incoming>, config: &Config) -> Response<Empty<Bytes>> {
    let mut response = Response::new(Empty::new());
    if req.uri().path() != "/" {
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    let k = fastrand::usize(..config.locations.len());
    *response.status_mut() = StatusCode::FOUND;
    let headers = response.headers_mut();
    headers.insert(LOCATION, config.locations[k].clone());
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn serve(config: Arc<Config>) -> std::io::Result<()> {
    let listener = TcpListener::bind(config.listen).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        stream.set_nodelay(true)?;
        let config = Arc::clone(&config);
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let response = answer(&req, &config);
                async move { Ok::<_, Infallible>(response) }
            });
            // Errors are the client's (reset, malformed request): hyper has answered them.
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

fn main() {
    let config = match parse_args() {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("renard-hyper: {e}");
            std::process::exit(2);
        }
    };
    let runtime = if config.threads == 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(config.threads).enable_all().build()
    };
    if let Err(e) = runtime.expect("tokio runtime").block_on(serve(config)) {
        eprintln!("renard-hyper: {e}");
        std::process::exit(1);
    }
}
