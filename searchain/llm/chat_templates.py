"""The chat-template families of the catalogue's models, as Jinja text, so that a test can render
the app's real prompts through every model's template without downloading gigabytes.

At run time the template always comes from the GGUF itself (``tokenizer.chat_template``); these
texts are reduced reproductions of each family's published template (the model cards'
``tokenizer_config.json``), keeping what decides whether the app's messages are accepted and how
they are laid out: the role checks and alternation rule (Mistral's raises on a system message:
node-llama-cpp issue 263), default system prompts (Qwen2.5), the Llama 3 header block, Phi-3's
tags, and Qwen3's ``enable_thinking`` switch. Tool-calling branches are left out: the app sends
no tools.
"""

from __future__ import annotations

# Plain ChatML: the fallback for a GGUF with no template, and the random-weight test model's own.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

QWEN25 = (
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}"
    "{%- else %}"
    "{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful "
    "assistant.<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' or (message.role == 'system' and not loop.first) "
    "or message.role == 'assistant' %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Qwen3 hybrid models (Qwen3-8B, Qwen3-14B): thinking is on unless the renderer passes
# enable_thinking=false, which pre-fills an empty think block; earlier assistant turns lose
# their reasoning.
QWEN3 = (
    "{%- if messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- set ns = namespace(last_query_index=messages|length - 1, found=false) %}"
    "{%- for message in messages[::-1] %}"
    "{%- if not ns.found and message.role == 'user' %}"
    "{%- set ns.last_query_index = (messages|length - 1) - loop.index0 %}"
    "{%- set ns.found = true %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{%- set content = message.content %}"
    "{%- set reasoning = '' %}"
    "{%- if '</think>' in content %}"
    "{%- set reasoning = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1]"
    ".lstrip('\\n') %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}"
    "{%- endif %}"
    "{%- if loop.index0 > ns.last_query_index and reasoning %}"
    "{{- '<|im_start|>assistant\\n<think>\\n' + reasoning + '\\n</think>\\n\\n' + content }}"
    "{%- else %}"
    "{{- '<|im_start|>assistant\\n' + content }}"
    "{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- endif %}"
)

# Qwen3 Instruct-2507 (4B, 30B-A3B): non-thinking only; ChatML with an optional system turn.
QWEN3_INSTRUCT = (
    "{%- if messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' or message.role == 'assistant' "
    "or (message.role == 'system' and not loop.first) %}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# Llama 3.1 / 3.2: a system header with the knowledge cutoff and today's date, then one header
# per turn.
LLAMA3 = (
    "{{- bos_token }}"
    "{%- if messages[0].role == 'system' %}"
    "{%- set system_message = messages[0].content | trim %}"
    "{%- set messages = messages[1:] %}"
    "{%- else %}"
    "{%- set system_message = '' %}"
    "{%- endif %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}"
    "{{- 'Cutting Knowledge Date: December 2023\\n' }}"
    "{{- 'Today Date: ' + strftime_now('%d %b %Y') + '\\n\\n' }}"
    "{{- system_message + '<|eot_id|>' }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message.role + '<|end_header_id|>\\n\\n' "
    "+ message.content | trim + '<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)

PHI3 = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' and message['content'] %}"
    "{{ '<|system|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% elif message['role'] == 'user' %}"
    "{{ '<|user|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ '<|assistant|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% else %}{{ eos_token }}{% endif %}"
)

# Mistral-7B-Instruct-v0.3 as bartowski's GGUF carries it: strict user/assistant alternation and
# no system role at all (a system message raises).
MISTRAL = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}"
    "{% if message['role'] == 'user' %}"
    "{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}"
    "{{ message['content'] + eos_token }}"
    "{% else %}"
    "{{ raise_exception('Only user and assistant roles are supported!') }}"
    "{% endif %}"
    "{% endfor %}"
)

TEMPLATES: dict[str, str] = {
    "chatml": CHATML_TEMPLATE,
    "qwen2.5": QWEN25,
    "qwen3": QWEN3,
    "qwen3-instruct": QWEN3_INSTRUCT,
    "llama3": LLAMA3,
    "phi3": PHI3,
    "mistral": MISTRAL,
}

# The special tokens each family's GGUF declares as BOS / EOS (what llama.cpp hands the renderer).
SPECIAL_TOKENS: dict[str, tuple[str, str]] = {
    "chatml": ("", "<|im_end|>"),
    "qwen2.5": ("", "<|im_end|>"),
    "qwen3": ("", "<|im_end|>"),
    "qwen3-instruct": ("", "<|im_end|>"),
    "llama3": ("<|begin_of_text|>", "<|eot_id|>"),
    "phi3": ("<s>", "<|endoftext|>"),
    "mistral": ("<s>", "</s>"),
}
