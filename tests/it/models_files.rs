//! Model files: clear errors on bad GGUF files (written here), Hugging Face folders, chat
//! templates.

use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use tstlab::models::gguf::GgufFile;
use tstlab::models::chat_template::{ChatMessage, ChatTemplate, Origin};
use tstlab::models::{GenParams, Generator, ModelError, Prompt};

/// A small GGUF file with the given architecture and one f32 tensor.
fn write_gguf(path: &Path, arch: &str) {
    let mut f = std::fs::File::create(path).unwrap();
    let t = QTensor::quantize(&Tensor::ones((4, 64), candle_core::DType::F32, &Device::Cpu).unwrap(), GgmlDType::F32).unwrap();
    let arch_v = Value::String(arch.into());
    let n = Value::U32(2);
    let emb = Value::U32(64);
    let md: Vec<(&str, &Value)> = vec![
        ("general.architecture", &arch_v),
        ("llama.block_count", &n),
        ("llama.embedding_length", &emb),
        ("falcon.block_count", &n),
    ];
    gguf_file::write(&mut f, &md, &[("token_embd.weight", &t)]).unwrap();
}

fn open_err(path: &Path) -> ModelError {
    match GgufFile::open(path) {
        Ok(_) => panic!("{} opened", path.display()),
        Err(e) => e,
    }
}

#[test]
fn gguf_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.gguf");
    let e = open_err(&missing);
    assert!(matches!(e, ModelError::NotFound(_)), "{e}");
    assert!(Generator::load(&missing).is_err_and(|e| matches!(e, ModelError::NotFound(_))));

    let empty = dir.path().join("empty.gguf");
    std::fs::write(&empty, b"").unwrap();
    let e = open_err(&empty);
    assert!(matches!(e, ModelError::NotGguf { .. }), "{e}");
    assert!(e.to_string().contains("0 bytes"), "{e}");

    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, b"hello, this is not a model\n").unwrap();
    let e = open_err(&text);
    assert!(matches!(e, ModelError::NotGguf { .. }), "{e}");
    assert!(e.to_string().contains("not a GGUF file"), "{e}");

    let good = dir.path().join("good.gguf");
    write_gguf(&good, "llama");
    let g = GgufFile::open(&good).unwrap();
    assert_eq!(g.architecture().unwrap(), "llama");
    // Metadata present but incomplete: a clear error, not a panic.
    let e = tstlab::models::llama::LlamaConfig::from_gguf(&g).unwrap_err();
    assert!(e.to_string().contains("metadata llama.attention.head_count is missing"), "{e}");
    let bytes = std::fs::read(&good).unwrap();

    // Cut inside the tensor data, and inside the header.
    for (cut, name) in [(bytes.len() - 100, "cut-data.gguf"), (40, "cut-header.gguf"), (6, "cut-magic.gguf")] {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = open_err(&p);
        assert!(matches!(e, ModelError::Truncated { .. }), "{name}: {e}");
        assert!(e.to_string().contains("truncated"), "{e}");
        assert!(Generator::load(&p).is_err());
    }

    let other = dir.path().join("falcon.gguf");
    write_gguf(&other, "falcon");
    let e = tstlab::models::arch::of_gguf(&GgufFile::open(&other).unwrap()).err().unwrap();
    assert!(matches!(e, ModelError::UnsupportedArchitecture { .. }), "{e}");
    assert!(e.to_string().contains("unsupported architecture `falcon` (supported: llama, qwen2, gpt2)"), "{e}");
    let e = Generator::load(&other).err().unwrap();
    assert!(matches!(e, ModelError::UnsupportedArchitecture { .. }), "{e}");

    // A K-quant tensor whose rows (128 values) cannot hold its super-blocks of 256: the header
    // of a valid Q4_K [2, 256] tensor edited to [4, 128] (the same bytes of data).
    let kq = dir.path().join("q4k-rows.gguf");
    let t = QTensor::quantize(&Tensor::ones((2, 256), candle_core::DType::F32, &Device::Cpu).unwrap(), GgmlDType::Q4K).unwrap();
    gguf_file::write(&mut std::fs::File::create(&kq).unwrap(), &[], &[("w.weight", &t)]).unwrap();
    let mut bytes = std::fs::read(&kq).unwrap();
    let dims = [256u64.to_le_bytes(), 2u64.to_le_bytes()].concat();
    let at = bytes.windows(16).position(|w| w == dims.as_slice()).unwrap();
    bytes[at..at + 16].copy_from_slice(&[128u64.to_le_bytes(), 4u64.to_le_bytes()].concat());
    std::fs::write(&kq, &bytes).unwrap();
    let e = GgufFile::open(&kq).unwrap().quant_blocks("w.weight").err().unwrap();
    assert!(matches!(e, ModelError::Invalid { .. }), "{e}");
    assert!(e.to_string().contains("q4k-rows.gguf") && e.to_string().contains("rows of 128 values do not fill blocks of 256"), "{e}");

    // A folder with neither a config.json nor a .gguf file.
    let e = Generator::load(dir.path().join("missing").parent().unwrap()).err().unwrap();
    assert!(e.to_string().contains(".gguf files"), "{e}");
}

/// A model's own template is rendered (minijinja); one that renders as ChatML is labelled so.
#[test]
fn chatml_templates_are_recognised() {
    let origin = || Origin { kind: "GGUF".into(), place: "model.gguf".into() };
    let smollm = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    let t = ChatTemplate::from_jinja(smollm, origin(), "", "").unwrap();
    assert_eq!(t.label(), "ChatML from the GGUF chat template");
    assert_eq!(
        t.render(&[ChatMessage::user("Hi")], true).unwrap(),
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
    assert_eq!(
        t.render(&[ChatMessage::system("Be brief."), ChatMessage::user("Hi")], false).unwrap(),
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
    );
    let plain = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    let t = ChatTemplate::from_jinja(plain, origin(), "", "").unwrap();
    assert_eq!(t.label(), "ChatML from the GGUF chat template");
    assert_eq!(t.render(&[ChatMessage::user("Hi")], true).unwrap(), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    let inst = "{% for message in messages %}{{ bos_token }}[INST] {{ message['content'] }} [/INST]{% endfor %}";
    let t = ChatTemplate::from_jinja(inst, origin(), "<s>", "</s>").unwrap();
    assert_eq!(t.label(), "Jinja from the GGUF chat template");
    assert_eq!(t.render(&[ChatMessage::user("Hi")], true).unwrap(), "<s>[INST] Hi [/INST]");
}

/// A tiny llama saved as a Hugging Face folder loads into the same forward as the tensors.
#[test]
fn huggingface_folder_loads() {
    use tokenizers::models::wordlevel::WordLevel;
    use tokenizers::pre_tokenizers::whitespace::Whitespace;
    let dir = tempfile::tempdir().unwrap();
    let words = ["<unk>", "<|im_start|>", "<|im_end|>", "user", "assistant", "system", "the", "food", "was", "cold", "warm", "good", "bad", "very", "."];
    let vocab: HashMap<String, u32> = words.iter().enumerate().map(|(i, w)| (w.to_string(), i as u32)).collect();
    let wl = WordLevel::builder().vocab(vocab.into_iter().collect()).unk_token("<unk>".into()).build().unwrap();
    let mut tk = tokenizers::Tokenizer::new(wl);
    tk.with_pre_tokenizer(Some(Whitespace {}));
    tk.add_special_tokens(&[tokenizers::AddedToken::from("<|im_start|>", true), tokenizers::AddedToken::from("<|im_end|>", true)]);
    tk.save(dir.path().join("tokenizer.json"), false).unwrap();

    let (d, hd, h, kv, inter, v, layers) = (16usize, 8usize, 2usize, 1usize, 24usize, words.len(), 2usize);
    let mut t: HashMap<String, Tensor> = HashMap::new();
    let mut seed = 1u64;
    let mut rnd = |shape: &[usize], offset: f32| {
        let n: usize = shape.iter().product();
        let vals: Vec<f32> = (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                offset + ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5)
            })
            .collect();
        Tensor::from_vec(vals, shape, &Device::Cpu).unwrap().to_dtype(candle_core::DType::BF16).unwrap()
    };
    t.insert("model.embed_tokens.weight".into(), rnd(&[v, d], 0.0));
    for l in 0..layers {
        let p = format!("model.layers.{l}");
        t.insert(format!("{p}.self_attn.q_proj.weight"), rnd(&[h * hd, d], 0.0));
        t.insert(format!("{p}.self_attn.k_proj.weight"), rnd(&[kv * hd, d], 0.0));
        t.insert(format!("{p}.self_attn.v_proj.weight"), rnd(&[kv * hd, d], 0.0));
        t.insert(format!("{p}.self_attn.q_proj.bias"), rnd(&[h * hd], 0.0));
        t.insert(format!("{p}.self_attn.k_proj.bias"), rnd(&[kv * hd], 0.0));
        t.insert(format!("{p}.self_attn.v_proj.bias"), rnd(&[kv * hd], 0.0));
        t.insert(format!("{p}.self_attn.o_proj.weight"), rnd(&[d, h * hd], 0.0));
        t.insert(format!("{p}.mlp.gate_proj.weight"), rnd(&[inter, d], 0.0));
        t.insert(format!("{p}.mlp.up_proj.weight"), rnd(&[inter, d], 0.0));
        t.insert(format!("{p}.mlp.down_proj.weight"), rnd(&[d, inter], 0.0));
        t.insert(format!("{p}.input_layernorm.weight"), rnd(&[d], 1.0));
        t.insert(format!("{p}.post_attention_layernorm.weight"), rnd(&[d], 1.0));
    }
    t.insert("model.norm.weight".into(), rnd(&[d], 1.0));
    candle_core::safetensors::save(&t, dir.path().join("model.safetensors")).unwrap();
    let config = serde_json::json!({
        "architectures": ["Qwen2ForCausalLM"], "hidden_size": d, "intermediate_size": inter,
        "num_hidden_layers": layers, "num_attention_heads": h, "num_key_value_heads": kv,
        "vocab_size": v, "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 64,
        "tie_word_embeddings": true, "eos_token_id": 2
    });
    std::fs::write(dir.path().join("config.json"), config.to_string()).unwrap();
    std::fs::write(
        dir.path().join("tokenizer_config.json"),
        serde_json::json!({"chat_template": "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"}).to_string(),
    )
    .unwrap();

    let g = Generator::load_on(dir.path(), &Device::Cpu).unwrap();
    let info = g.info();
    assert_eq!((info.shape.architecture.as_str(), info.format.as_str(), info.shape.layers, info.shape.vocab_size), ("Qwen2ForCausalLM", "huggingface", 2, v));
    assert_eq!(info.shape.parameters, v * d + layers * (d * d * 2 + 2 * d * hd + h * hd + 2 * kv * hd + 3 * d * inter + 2 * d) + d);
    assert!(info.chat_template.starts_with("ChatML from"), "{}", info.chat_template);
    assert_eq!(g.sha256().unwrap().len(), 64);
    let ids = g.encode(&Prompt::user("the food was cold .")).unwrap();
    assert_eq!(ids[0], 1);
    assert_eq!(g.tokenizer().stop_ids(), &[2]);
    // The loaded model computes what the reference forward computes on the same weights.
    let logits = g.llama().unwrap().forward_reference(&ids).unwrap();
    assert_eq!(logits.dims(), &[ids.len(), v]);
    let mut got = None;
    let params = GenParams { max_new_tokens: 5, ..GenParams::default() };
    g.generate(&[Prompt::Tokens(ids.clone())], &params, &AtomicBool::new(false), |_, r| got = Some(r)).unwrap();
    let got = got.unwrap();
    let first: u32 = logits.get(ids.len() - 1).unwrap().argmax(0).unwrap().to_scalar().unwrap();
    if first != 2 {
        assert_eq!(got.tokens[0], first);
    }
    assert_eq!(got.prompt_tokens, ids.len());

    // An unsupported architecture in config.json.
    std::fs::write(dir.path().join("config.json"), serde_json::json!({"architectures": ["PhiForCausalLM"]}).to_string()).unwrap();
    let e = Generator::load_on(dir.path(), &Device::Cpu).err().unwrap();
    assert!(matches!(e, ModelError::UnsupportedArchitecture { .. }), "{e}");
    assert!(e.to_string().contains("`PhiForCausalLM` (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel)"), "{e}");
}

/// `tstlab bench transfer` reports a missing model clearly (and needs no store).
#[test]
fn bench_transfer_reports_missing_model() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.gguf");
    assert_cmd::Command::cargo_bin("tstlab")
        .unwrap()
        .env("TSTLAB_HOME", dir.path())
        .args(["bench", "transfer", "--n", "2", "--model"])
        .arg(&missing)
        .assert()
        .failure()
        .stderr(predicates::str::contains("model not found"));
    assert!(!dir.path().join("tstlab.sqlite").exists(), "bench opens no store");
}

/// A misspelt `TSTLAB_SIMD` is refused before any work, naming the values it takes; a known one
/// is taken.
#[test]
fn an_unknown_tstlab_simd_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.gguf");
    let run = |simd: &str| {
        assert_cmd::Command::cargo_bin("tstlab")
            .unwrap()
            .env("TSTLAB_HOME", dir.path())
            .env("TSTLAB_SIMD", simd)
            .args(["bench", "transfer", "--n", "2", "--model"])
            .arg(&missing)
            .assert()
            .failure()
    };
    let out = run("avx3");
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("TSTLAB_SIMD=\"avx3\" is not one of avx512, native, avx2, portable"), "{err}");
    assert!(!err.contains("model not found"), "refused before the command ran: {err}");
    let out = run("AVX2");
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("model not found") && !err.contains("TSTLAB_SIMD"), "{err}");
}

/// `tstlab bench transfer --peer DIR` with no llama.cpp built there says how to build it, before
/// loading any model.
#[test]
fn bench_transfer_peer_missing_says_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("model.gguf");
    std::fs::write(&gguf, b"not loaded").unwrap();
    let peer = dir.path().join("no-peer");
    let out = assert_cmd::Command::cargo_bin("tstlab")
        .unwrap()
        .env("TSTLAB_HOME", dir.path())
        .args(["bench", "transfer", "--n", "2", "--model"])
        .arg(&gguf)
        .arg("--peer")
        .arg(&peer)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("no llama.cpp peer there"), "{err}");
    assert!(err.contains(&format!("scripts/llama-cpp-peer.sh {}", peer.display())), "{err}");
    assert!(!err.contains("loading the model"), "the peer is checked before the model is read: {err}");
}

/// `tstlab bench bertscore` names the device the encoder ran on (the one `device::choose` gives),
/// in its line and its JSON.
#[test]
fn bench_bertscore_names_the_device_it_ran_on() {
    let dir = tempfile::tempdir().unwrap();
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny-hf/bert-bin");
    let want = tstlab::models::device::describe(&tstlab::models::device::choose());
    let run = |json: bool| {
        let mut c = assert_cmd::Command::cargo_bin("tstlab").unwrap();
        c.env("TSTLAB_HOME", dir.path()).args(["bench", "bertscore", "--pairs", "4", "--model"]).arg(&model);
        if json {
            c.arg("--json");
        }
        String::from_utf8(c.assert().success().get_output().stdout.clone()).unwrap()
    };
    let line = run(false);
    assert!(line.contains(&format!(" on {want} (")), "{line}");
    assert!(!line.contains("on CPU"), "{line}");
    let v: serde_json::Value = serde_json::from_str(&run(true)).unwrap();
    assert_eq!(v["device"], want);
}

/// `tstlab bench score` names the device g-PPL ran on (the loaded model's), not a fixed "CPU".
#[test]
fn bench_score_names_the_device_gppl_ran_on() {
    let model = tstlab::models::default_model_path();
    if !model.exists() {
        crate::skip::skip(format!("{} is not installed (tstlab models install)", model.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let want = tstlab::models::device::describe(&tstlab::models::device::choose());
    let out = assert_cmd::Command::cargo_bin("tstlab")
        .unwrap()
        .env("TSTLAB_HOME", dir.path())
        .args(["bench", "score", "--texts", "20", "--lm-texts", "2", "--json", "--model"])
        .arg(&model)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let gppl = v.as_array().unwrap().iter().find(|r| r["metric"] == "g-ppl").expect("a g-ppl row");
    let note = gppl["note"].as_str().unwrap();
    assert!(note.contains(&format!(" on {want}")), "{note}");
    assert!(!note.contains("on the CPU"), "{note}");
}
