<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>Accessibility</name>
    <message>
        <source>%n paragraph(s)</source>
        <translation>%n 段</translation>
    </message>
    <message>
        <source>%n code block(s)</source>
        <translation>%n 个代码块</translation>
    </message>
    <message>
        <source>nanobot is replying</source>
        <translation>nanobot 正在回复</translation>
    </message>
    <message>
        <source>%n word(s)</source>
        <translation>%n 个词</translation>
    </message>
    <message>
        <source>Reply finished: {shape}, {words}</source>
        <translation>回复完成：{shape}，{words}</translation>
    </message>
    <message>
        <source>The reply failed: {error}</source>
        <translation>回复失败：{error}</translation>
    </message>
    <message>
        <source>Approval needed: nanobot wants to run the tool “{tool}”. Press Ctrl+Shift+A to answer.</source>
        <translation>需要批准：nanobot 想运行工具“{tool}”。按 Ctrl+Shift+A 回答。</translation>
    </message>
    <message>
        <source>Approval needed: {title}</source>
        <translation>需要批准：{title}</translation>
    </message>
    <message>
        <source>Background task “{label}” finished: {status}</source>
        <translation>后台任务“{label}”已结束：{status}</translation>
    </message>
    <message>
        <source>Scheduled task “{name}” finished: {status}</source>
        <translation>定时任务“{name}”已结束：{status}</translation>
    </message>
    <message>
        <source>Heartbeat finished: {outcome}</source>
        <translation>心跳已结束：{outcome}</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>No approval is waiting.</source>
        <translation>没有等待中的批准。</translation>
    </message>
</context>
<context>
    <name>Actions</name>
    <message>
        <source>&amp;New chat</source>
        <translation>新建对话(&amp;N)</translation>
    </message>
    <message>
        <source>Start a new conversation</source>
        <translation>开始一段新对话</translation>
    </message>
    <message>
        <source>&amp;Stop</source>
        <translation>停止(&amp;S)</translation>
    </message>
    <message>
        <source>Stop the running reply, its tool and its subagents (Esc)</source>
        <translation>停止正在生成的回复、它的工具和子代理（Esc）</translation>
    </message>
    <message>
        <source>&amp;Rename session…</source>
        <translation>重命名会话(&amp;R)…</translation>
    </message>
    <message>
        <source>Give the selected session a title (F2)</source>
        <translation>为选中的会话设置标题（F2）</translation>
    </message>
    <message>
        <source>&amp;Delete session</source>
        <translation>删除会话(&amp;D)</translation>
    </message>
    <message>
        <source>Move the selected session to the trash (it can be restored)</source>
        <translation>把选中的会话移到回收站（可以恢复）</translation>
    </message>
    <message>
        <source>&amp;Undo delete</source>
        <translation>撤销删除(&amp;U)</translation>
    </message>
    <message>
        <source>Restore the session deleted last</source>
        <translation>恢复最近删除的会话</translation>
    </message>
    <message>
        <source>Export as &amp;Markdown…</source>
        <translation>导出为 &amp;Markdown…</translation>
    </message>
    <message>
        <source>Save the session as a readable Markdown transcript</source>
        <translation>把会话保存为易读的 Markdown 记录</translation>
    </message>
    <message>
        <source>Export as &amp;JSON…</source>
        <translation>导出为 &amp;JSON…</translation>
    </message>
    <message>
        <source>Save the session&apos;s metadata and messages as JSON</source>
        <translation>把会话的元数据和消息保存为 JSON</translation>
    </message>
    <message>
        <source>Re&amp;veal session file</source>
        <translation>显示会话文件(&amp;V)</translation>
    </message>
    <message>
        <source>Open the folder holding the session&apos;s .jsonl file</source>
        <translation>打开存放该会话 .jsonl 文件的文件夹</translation>
    </message>
    <message>
        <source>Searc&amp;h sessions…</source>
        <translation>搜索会话(&amp;H)…</translation>
    </message>
    <message>
        <source>Search session titles and message text (Ctrl+K)</source>
        <translation>搜索会话标题和消息内容（Ctrl+K）</translation>
    </message>
    <message>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <source>Model endpoint, agent, tool approvals, heartbeat, theme</source>
        <translation>模型端点、代理、工具批准、心跳、主题</translation>
    </message>
    <message>
        <source>&amp;Run heartbeat now</source>
        <translation>立即运行心跳(&amp;R)</translation>
    </message>
    <message>
        <source>Check HEARTBEAT.md for tasks now</source>
        <translation>现在检查 HEARTBEAT.md 中的任务</translation>
    </message>
    <message>
        <source>&amp;Pause heartbeat</source>
        <translation>暂停心跳(&amp;P)</translation>
    </message>
    <message>
        <source>Stop the periodic heartbeat until resumed</source>
        <translation>停止定期心跳，直到恢复</translation>
    </message>
    <message>
        <source>Show / &amp;hide window</source>
        <translation>显示 / 隐藏窗口(&amp;H)</translation>
    </message>
    <message>
        <source>Show the window, or hide it to the tray</source>
        <translation>显示窗口，或把它隐藏到托盘</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>Stop the agent, save everything and quit</source>
        <translation>停止代理，保存全部内容后退出</translation>
    </message>
    <message>
        <source>Open &amp;log folder</source>
        <translation>打开日志文件夹(&amp;L)</translation>
    </message>
    <message>
        <source>Open the folder with the app&apos;s log files</source>
        <translation>打开存放应用日志文件的文件夹</translation>
    </message>
    <message>
        <source>&amp;Reset layout</source>
        <translation>重置布局(&amp;R)</translation>
    </message>
    <message>
        <source>Put every panel back where it is on a first start</source>
        <translation>把每个面板放回首次启动时的位置</translation>
    </message>
    <message>
        <source>Check for &amp;updates…</source>
        <translation>检查更新(&amp;U)…</translation>
    </message>
    <message>
        <source>Ask the update server whether a newer version exists</source>
        <translation>询问更新服务器是否有新版本</translation>
    </message>
    <message>
        <source>Roll &amp;back to the previous version…</source>
        <translation>回退到上一个版本(&amp;B)…</translation>
    </message>
    <message>
        <source>Start the version kept before the last update next time</source>
        <translation>下次启动时使用上次更新前保留的版本</translation>
    </message>
    <message>
        <source>&amp;About nanobot Desktop</source>
        <translation>关于 nanobot Desktop(&amp;A)</translation>
    </message>
    <message>
        <source>Version and licence</source>
        <translation>版本和许可证</translation>
    </message>
    <message>
        <source>Go to waiting &amp;approval</source>
        <translation>转到等待中的批准(&amp;A)</translation>
    </message>
    <message>
        <source>Focus the approval the agent is waiting for; then A allows once, W always allows, D denies (with the reason typed), R types a reason</source>
        <translation>聚焦代理正在等待的批准；然后按 A 允许一次，W 始终允许，D 拒绝（附上已输入的理由），R 输入理由</translation>
    </message>
    <message>
        <source>Next &amp;region</source>
        <translation>下一个区域(&amp;R)</translation>
    </message>
    <message>
        <source>Move focus to the next part of the window: sessions, chat, panels (F6)</source>
        <translation>把焦点移到窗口的下一部分：会话、对话、面板（F6）</translation>
    </message>
    <message>
        <source>Previous re&amp;gion</source>
        <translation>上一个区域(&amp;G)</translation>
    </message>
    <message>
        <source>Move focus to the previous part of the window (Shift+F6)</source>
        <translation>把焦点移到窗口的上一部分（Shift+F6）</translation>
    </message>
    <message>
        <source>&amp;Larger text</source>
        <translation>放大文字(&amp;L)</translation>
    </message>
    <message>
        <source>Make all text larger (Ctrl++)</source>
        <translation>放大所有文字（Ctrl++）</translation>
    </message>
    <message>
        <source>S&amp;maller text</source>
        <translation>缩小文字(&amp;M)</translation>
    </message>
    <message>
        <source>Make all text smaller (Ctrl+-)</source>
        <translation>缩小所有文字（Ctrl+-）</translation>
    </message>
    <message>
        <source>&amp;Default text size</source>
        <translation>默认文字大小(&amp;D)</translation>
    </message>
    <message>
        <source>Text at the system&apos;s size (Ctrl+0)</source>
        <translation>文字恢复为系统大小（Ctrl+0）</translation>
    </message>
    <message>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <source>Every shortcut of the app, searchable (Ctrl+/)</source>
        <translation>应用的所有快捷键，可搜索（Ctrl+/）</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Session</source>
        <translation>会话(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Agent</source>
        <translation>代理(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;Resume heartbeat</source>
        <translation>恢复心跳(&amp;R)</translation>
    </message>
</context>
<context>
    <name>Chat</name>
    <message>
        <source>Images and text files ({patterns})</source>
        <translation>图片和文本文件 ({patterns})</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <source>{name} is a folder; attach files one by one.</source>
        <translation>{name} 是一个文件夹；请逐个附加文件。</translation>
    </message>
    <message>
        <source>{name} is not a regular file (a device, pipe or socket), so it was not attached.</source>
        <translation>{name} 不是普通文件（设备、管道或套接字），因此未附加。</translation>
    </message>
    <message>
        <source>{name} was not attached: it has {size} and an image can have at most {limit}. Make it smaller, then attach it again.</source>
        <translation>{name} 未附加：它有 {size}，而图片最多 {limit}。请缩小后再附加。</translation>
    </message>
    <message>
        <source>{name} was not attached: it is named like an image but is not a PNG, JPEG, GIF or WebP image.</source>
        <translation>{name} 未附加：它的名字像图片，但不是 PNG、JPEG、GIF 或 WebP 图片。</translation>
    </message>
    <message>
        <source>{name} was not attached: it has {size} and a text file can have at most {limit}.</source>
        <translation>{name} 未附加：它有 {size}，而文本文件最多 {limit}。</translation>
    </message>
    <message>
        <source>{name} was not attached: there is no workspace to copy it into. Choose a workspace in Settings, then attach it again.</source>
        <translation>{name} 未附加：没有可复制到的工作区。请在设置中选择工作区，然后再附加。</translation>
    </message>
    <message>
        <source>{name} was not attached: only images (PNG, JPEG, GIF, WebP) and text files can be attached.</source>
        <translation>{name} 未附加：只能附加图片（PNG、JPEG、GIF、WebP）和文本文件。</translation>
    </message>
    <message>
        <source>Remove this attachment</source>
        <translation>移除这个附件</translation>
    </message>
    <message>
        <source>This message is not in the session file (it was not saved), so the conversation cannot branch here.</source>
        <translation>这条消息不在会话文件中（它没有被保存），所以对话无法从这里分支。</translation>
    </message>
    <message>
        <source>This reply does not answer a message of yours, so it cannot be regenerated.</source>
        <translation>这条回复不是对你的某条消息的回答，所以无法重新生成。</translation>
    </message>
    <message>
        <source>No branch was made: {error}</source>
        <translation>没有创建分支：{error}</translation>
    </message>
    <message>
        <source>Allowed once</source>
        <translation>已允许一次</translation>
    </message>
    <message>
        <source>Always allowed</source>
        <translation>已始终允许</translation>
    </message>
    <message>
        <source>Denied</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <source>answered from the tray menu</source>
        <translation>在托盘菜单中回答</translation>
    </message>
    <message>
        <source>answered from a notification</source>
        <translation>在通知中回答</translation>
    </message>
    <message>
        <source>answered in the terminal</source>
        <translation>在终端中回答</translation>
    </message>
    <message>
        <source>Allow the tool “{tool}” from {origin} to run?</source>
        <translation>允许来自 {origin} 的工具“{tool}”运行吗？</translation>
    </message>
    <message>
        <source>Allow the tool “{tool}” to run?</source>
        <translation>允许工具“{tool}”运行吗？</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>in {folder}</source>
        <translation>位于 {folder}</translation>
    </message>
    <message>
        <source>Changes</source>
        <translation>更改</translation>
    </message>
    <message>
        <source>Show arguments</source>
        <translation>显示参数</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Reason for denying</source>
        <translation>拒绝的理由</translation>
    </message>
    <message>
        <source>Reason for denying (optional)</source>
        <translation>拒绝的理由（可选）</translation>
    </message>
    <message>
        <source>If you deny, the agent reads this reason and can adjust its plan.</source>
        <translation>如果你拒绝，代理会读到这个理由并据此调整计划。</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>允许一次</translation>
    </message>
    <message>
        <source>Always allow</source>
        <translation>始终允许</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Without a sandbox, every command is asked for</source>
        <translation>没有沙箱时，每条命令都会先询问</translation>
    </message>
    <message>
        <source>Show or hide what this approval was about</source>
        <translation>显示或隐藏这次批准的内容</translation>
    </message>
    <message>
        <source>Keys: A allow once, W always allow, D deny, R type a reason for denying.</source>
        <translation>按键：A 允许一次，W 始终允许，D 拒绝，R 输入拒绝的理由。</translation>
    </message>
    <message>
        <source>Hide arguments</source>
        <translation>隐藏参数</translation>
    </message>
    <message>
        <source>{answer}: {tool} {target}</source>
        <translation>{answer}：{tool} {target}</translation>
    </message>
    <message>
        <source>{line} — “{reason}”</source>
        <translation>{line} ——“{reason}”</translation>
    </message>
    <message>
        <source>{line} ({by})</source>
        <translation>{line}（{by}）</translation>
    </message>
    <message>
        <source>{line} ({why})</source>
        <translation>{line}（{why}）</translation>
    </message>
    <message>
        <source>Allowed</source>
        <translation>已允许</translation>
    </message>
    <message>
        <source>Waiting for your answer</source>
        <translation>等待你的回答</translation>
    </message>
    <message>
        <source>Hide details ▴</source>
        <translation>隐藏详情 ▴</translation>
    </message>
    <message>
        <source>Show details ▾</source>
        <translation>显示详情 ▾</translation>
    </message>
    <message>
        <source>Approval needed: {question}</source>
        <translation>需要批准：{question}</translation>
    </message>
    <message>
        <source>start a new conversation (memory is updated first)</source>
        <translation>开始新对话（先更新记忆）</translation>
    </message>
    <message>
        <source>stop the running reply and its tasks</source>
        <translation>停止正在生成的回复及其任务</translation>
    </message>
    <message>
        <source>list the commands</source>
        <translation>列出所有命令</translation>
    </message>
    <message>
        <source>Message to nanobot</source>
        <translation>发给 nanobot 的消息</translation>
    </message>
    <message>
        <source>Message nanobot…   (/ for commands)</source>
        <translation>给 nanobot 发消息…（输入 / 查看命令）</translation>
    </message>
    <message>
        <source>Enter sends, Shift+Enter starts a new line, ↑ recalls the last message, / lists the commands; drop or paste files and images to attach them</source>
        <translation>Enter 发送，Shift+Enter 换行，↑ 调出上一条消息，/ 列出命令；拖入或粘贴文件和图片即可附加</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Send (Enter)</source>
        <translation>发送（Enter）</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop the reply (Esc)</source>
        <translation>停止回复（Esc）</translation>
    </message>
    <message>
        <source>Attach images or text files…</source>
        <translation>附加图片或文本文件…</translation>
    </message>
    <message>
        <source>Attach files</source>
        <translation>附加文件</translation>
    </message>
    <message>
        <source>Attach images or text files</source>
        <translation>附加图片或文本文件</translation>
    </message>
    <message>
        <source>Could not attach {name} ({reason}). Check that the file exists and can be read, then attach it again.</source>
        <translation>无法附加 {name}（{reason}）。请确认文件存在且可读，然后重新附加。</translation>
    </message>
    <message>
        <source>The pasted image was not attached because no workspace is open. Choose a workspace in Settings, then paste again.</source>
        <translation>没有打开工作区，粘贴的图片未能附加。请在设置中选择工作区，然后重新粘贴。</translation>
    </message>
    <message>
        <source>The pasted image could not be converted to PNG. Save it as a file and attach that instead.</source>
        <translation>粘贴的图片无法转换为 PNG。请先把它保存为文件，再附加该文件。</translation>
    </message>
    <message>
        <source>Could not save the pasted image ({reason}). Free some disk space, then paste again.</source>
        <translation>无法保存粘贴的图片（{reason}）。请释放一些磁盘空间，然后重新粘贴。</translation>
    </message>
    <message>
        <source>Could not read this session ({error}). Its file was left as it is; open it again once it can be read.</source>
        <translation>无法读取这个会话（{error}）。它的文件保持原样；等可以读取时再打开它。</translation>
    </message>
    <message>
        <source>This conversation stopped in the middle of a turn (nanobot saved where it was).</source>
        <translation>这段对话在一轮回复中途停止了（nanobot 保存了当时的进度）。</translation>
    </message>
    <message>
        <source>{tools} had not finished: their outcome is unknown and they are not run again.</source>
        <translation>{tools} 尚未完成：其结果未知，不会再次运行。</translation>
    </message>
    <message>
        <source>{problem} The messages are still not saved: retry once that is fixed.</source>
        <translation>{problem}消息仍未保存：解决后请重试。</translation>
    </message>
    <message>
        <source>Saved to the session file.</source>
        <translation>已保存到会话文件。</translation>
    </message>
    <message>
        <source>another program</source>
        <translation>另一个程序</translation>
    </message>
    <message>
        <source>{count} message(s) the app wrote to “{session}” were erased from its file by {by}. The app kept them.</source>
        <translation>本应用写入“{session}”的 {count} 条消息已被{by}从文件中抹去。应用已保留这些消息。</translation>
    </message>
    <message>
        <source>Waiting for an answer… {waited} s (gives up after {limit} s)</source>
        <translation>正在等待回答… {waited} 秒（{limit} 秒后放弃）</translation>
    </message>
    <message>
        <source>The local server is reading the prompt… {waited} s</source>
        <translation>本地服务器正在读取提示词… {waited} 秒</translation>
    </message>
    <message>
        <source>Waiting for the rest of the reply… {waited} s (gives up after {limit} s)</source>
        <translation>正在等待回复的其余部分… {waited} 秒（{limit} 秒后放弃）</translation>
    </message>
    <message>
        <source>Summarising older messages into memory…</source>
        <translation>正在把较早的消息总结进记忆…</translation>
    </message>
    <message>
        <source>Older messages were summarised into memory.</source>
        <translation>较早的消息已总结进记忆。</translation>
    </message>
    <message>
        <source>Sent to {channel}:{chat}: {text}</source>
        <translation>已发送到 {channel}:{chat}：{text}</translation>
    </message>
    <message>
        <source>Open Settings to choose a provider and model.</source>
        <translation>请打开设置，选择服务商和模型。</translation>
    </message>
    <message>
        <source>Send the message again to get a whole reply.</source>
        <translation>请重新发送这条消息，以获得完整的回复。</translation>
    </message>
    <message>
        <source>Try again; if it happens again, the log (Help → Open log folder) has the details.</source>
        <translation>请再试一次；如果再次发生，详情见日志（帮助 → 打开日志文件夹）。</translation>
    </message>
    <message>
        <source>The conversation was not cleared: it could not be summarised into memory. Nothing was lost; you can try again, or start a new chat and keep this one.</source>
        <translation>对话未被清空：无法将其总结进记忆。没有丢失任何内容；你可以重试，或开始新对话并保留这一个。</translation>
    </message>
    <message>
        <source>; it said: “{words}”</source>
        <translation>；端点说：“{words}”</translation>
    </message>
    <message>
        <source> after {count} attempts</source>
        <translation>（已尝试 {count} 次）</translation>
    </message>
    <message>
        <source>connection refused</source>
        <translation>连接被拒绝</translation>
    </message>
    <message>
        <source>host not found</source>
        <translation>找不到主机</translation>
    </message>
    <message>
        <source>connection failed</source>
        <translation>连接失败</translation>
    </message>
    <message>
        <source>The endpoint rejected the API key ({status}). Check the API key in Settings.</source>
        <translation>端点拒绝了 API 密钥（{status}）。请在设置中检查 API 密钥。</translation>
    </message>
    <message>
        <source>The endpoint does not know the model &apos;{model}&apos; (404){said}. Pick a model from the endpoint&apos;s list in Settings.</source>
        <translation>端点不认识模型“{model}”（404）{said}。请在设置中从端点的模型列表里选择一个。</translation>
    </message>
    <message>
        <source>{api_base} answered 404 Not Found{said}. Check the base URL in Settings (it usually ends in /v1).</source>
        <translation>{api_base} 返回 404 Not Found{said}。请在设置中检查基础 URL（通常以 /v1 结尾）。</translation>
    </message>
    <message>
        <source>The endpoint is rate-limiting requests (429){tries}{said}. Wait a moment, then send again.</source>
        <translation>端点正在限制请求频率（429）{tries}{said}。请稍等片刻再发送。</translation>
    </message>
    <message>
        <source>The endpoint is rate-limiting requests (429){tries}{said}. Check the account&apos;s quota or billing.</source>
        <translation>端点正在限制请求频率（429）{tries}{said}。请检查账户的额度或账单。</translation>
    </message>
    <message>
        <source>The endpoint had a server error ({status}){tries}{said}. Try again in a moment.</source>
        <translation>端点出现服务器错误（{status}）{tries}{said}。请稍后再试。</translation>
    </message>
    <message>
        <source>The endpoint rejected the request ({status}){said}. Check the model and the endpoint in Settings.</source>
        <translation>端点拒绝了请求（{status}）{said}。请在设置中检查模型和端点。</translation>
    </message>
    <message>
        <source>{api_base} did not answer within {seconds} s{tries}. Try again, or check the endpoint and its timeouts in Settings.</source>
        <translation>{api_base} 在 {seconds} 秒内没有应答{tries}。请重试，或在设置中检查端点及其超时设置。</translation>
    </message>
    <message>
        <source>Could not connect to {api_base} ({why}){tries}. Check that the server is running and that its URL in Settings is right.</source>
        <translation>无法连接到 {api_base}（{why}）{tries}。请确认服务器正在运行，并且设置中的 URL 正确。</translation>
    </message>
    <message>
        <source>The endpoint reported an error{said}. Try again in a moment.</source>
        <translation>端点报告了错误{said}。请稍后再试。</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <source>System message</source>
        <translation>系统消息</translation>
    </message>
    <message>
        <source>Reasoning</source>
        <translation>推理过程</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy this code block</source>
        <translation>复制这段代码</translation>
    </message>
    <message>
        <source>Copy code block {number}</source>
        <translation>复制代码块 {number}</translation>
    </message>
    <message>
        <source>Copy the message&apos;s Markdown source</source>
        <translation>复制这条消息的 Markdown 源文本</translation>
    </message>
    <message>
        <source>Retry save</source>
        <translation>重新保存</translation>
    </message>
    <message>
        <source>Write this reply to the session file again (after freeing space)</source>
        <translation>再次把这条回复写入会话文件（请先释放空间）</translation>
    </message>
    <message>
        <source>Reply from nanobot, being written</source>
        <translation>nanobot 的回复，正在生成</translation>
    </message>
    <message>
        <source>Reply from nanobot</source>
        <translation>nanobot 的回复</translation>
    </message>
    <message>
        <source>Writing…</source>
        <translation>正在输出…</translation>
    </message>
    <message>
        <source>Cut off by the endpoint</source>
        <translation>被端点中断</translation>
    </message>
    <message>
        <source>Not saved</source>
        <translation>未保存</translation>
    </message>
    <message>
        <source>Written by {model}</source>
        <translation>由 {model} 撰写</translation>
    </message>
    <message>
        <source>Show the previous version of the conversation from here</source>
        <translation>显示从这里开始的对话的上一个版本</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>上一个版本</translation>
    </message>
    <message>
        <source>Show the next version of the conversation from here</source>
        <translation>显示从这里开始的对话的下一个版本</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>下一个版本</translation>
    </message>
    <message>
        <source>Version {position} of {count} of the conversation from this message</source>
        <translation>从这条消息开始的对话：第 {position} 个版本，共 {count} 个</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Edit this message and send it again; the conversation so far stays as it is</source>
        <translation>编辑这条消息并重新发送；之前的对话保持不变</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Send as a new branch</source>
        <translation>作为新分支发送</translation>
    </message>
    <message>
        <source>Start a new version of the conversation from here with the edited text (Ctrl+Enter)</source>
        <translation>用编辑后的文本从这里开始对话的新版本（Ctrl+Enter）</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>重新生成</translation>
    </message>
    <message>
        <source>Ask for a new reply to the same message; this reply stays as it is</source>
        <translation>为同一条消息请求新的回复；这条回复保持不变</translation>
    </message>
    <message>
        <source>No configured provider can serve {model}. Click to choose another model.</source>
        <translation>没有已配置的服务商能提供 {model}。点击选择其他模型。</translation>
    </message>
    <message>
        <source>This chat uses the default model, {model}, served by {provider} at {url}. Click to choose another model for this chat.</source>
        <translation>此对话使用默认模型 {model}，由 {provider}（{url}）提供。点击为此对话选择其他模型。</translation>
    </message>
    <message>
        <source>This chat uses {model}, served by {provider} at {url}. Click to choose another model for this chat.</source>
        <translation>此对话使用 {model}，由 {provider}（{url}）提供。点击为此对话选择其他模型。</translation>
    </message>
    <message>
        <source>The model choice was not saved: {error}</source>
        <translation>模型选择没有保存：{error}</translation>
    </message>
    <message>
        <source>Default model: {model}</source>
        <translation>默认模型：{model}</translation>
    </message>
    <message>
        <source>Loading the model lists…</source>
        <translation>正在加载模型列表…</translation>
    </message>
    <message>
        <source>Cannot list its models: {error}</source>
        <translation>无法列出它的模型：{error}</translation>
    </message>
    <message>
        <source>Cannot list the models of {provider}: {error}</source>
        <translation>无法列出 {provider} 的模型：{error}</translation>
    </message>
    <message>
        <source>{provider} lists no models.</source>
        <translation>{provider} 没有列出任何模型。</translation>
    </message>
    <message>
        <source>Refresh the model lists</source>
        <translation>刷新模型列表</translation>
    </message>
    <message>
        <source>Served by {provider} at {url}.</source>
        <translation>由 {provider}（{url}）提供。</translation>
    </message>
    <message>
        <source>No configured provider can serve {model}.</source>
        <translation>没有已配置的服务商能提供 {model}。</translation>
    </message>
    <message>
        <source>Start a conversation: type a message below.

Enter sends · Shift+Enter adds a line · / for commands · drop or paste files and images to attach</source>
        <translation>开始对话：在下方输入消息。

Enter 发送 · Shift+Enter 换行 · / 查看命令 · 拖入或粘贴文件和图片即可附加</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话内容</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>denied</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>waiting for your approval</source>
        <translation>等待你的批准</translation>
    </message>
    <message>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <source>{tool}: {status} — click to open in the inspector</source>
        <translation>{tool}：{status} —— 点击在检查器中打开</translation>
    </message>
    <message>
        <source>Tool call {tool}: {status}</source>
        <translation>工具调用 {tool}：{status}</translation>
    </message>
    <message>
        <source>{summary}. Enter opens it in the inspector.</source>
        <translation>{summary}。按 Enter 在检查器中打开。</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详情</translation>
    </message>
    <message>
        <source>Show the technical details</source>
        <translation>显示技术细节</translation>
    </message>
    <message>
        <source>Error: </source>
        <translation>错误：</translation>
    </message>
    <message>
        <source>1 step</source>
        <translation>1 个步骤</translation>
    </message>
    <message>
        <source>{count} steps</source>
        <translation>{count} 个步骤</translation>
    </message>
    <message>
        <source>Show or hide the tool calls of this turn</source>
        <translation>显示或隐藏本轮的工具调用</translation>
    </message>
    <message>
        <source>Image {name}</source>
        <translation>图片 {name}</translation>
    </message>
    <message>
        <source>{name} — click to view at full size</source>
        <translation>{name} — 点击查看原图</translation>
    </message>
    <message>
        <source>{name} could not be read as an image</source>
        <translation>{name} 无法作为图片读取</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
</context>
<context>
    <name>Duration</name>
    <message>
        <source>{ms} ms</source>
        <translation>{ms} 毫秒</translation>
    </message>
    <message>
        <source>{s} s</source>
        <translation>{s} 秒</translation>
    </message>
    <message>
        <source>{min} min {s} s</source>
        <translation>{min} 分 {s} 秒</translation>
    </message>
    <message>
        <source>{h} h {min} min</source>
        <translation>{h} 小时 {min} 分</translation>
    </message>
</context>
<context>
    <name>Editor</name>
    <message>
        <source>Close the comparison</source>
        <translation>关闭对比</translation>
    </message>
    <message>
        <source>(no differences)</source>
        <translation>（没有差异）</translation>
    </message>
    <message>
        <source>cannot read the file: {error}</source>
        <translation>无法读取文件：{error}</translation>
    </message>
    <message>
        <source>Loading {name}… {percent}%</source>
        <translation>正在加载 {name}… {percent}%</translation>
    </message>
    <message>
        <source>{name} is not UTF-8</source>
        <translation>{name} 不是 UTF-8 编码</translation>
    </message>
    <message>
        <source>Saving is disabled: {reason}.</source>
        <translation>已禁止保存：{reason}。</translation>
    </message>
    <message>
        <source>the check before saving failed: {error}</source>
        <translation>保存前的检查失败：{error}</translation>
    </message>
    <message>
        <source>Go to line {line}</source>
        <translation>转到第 {line} 行</translation>
    </message>
    <message>
        <source>Not saved: {problem}</source>
        <translation>未保存：{problem}</translation>
    </message>
    <message>
        <source>{problem} Nothing on disk changed, and your text stays here.</source>
        <translation>{problem}磁盘上的内容没有改动，你的文本仍保留在这里。</translation>
    </message>
    <message>
        <source>Could not save {name}: {reason}</source>
        <translation>无法保存 {name}：{reason}</translation>
    </message>
    <message>
        <source>{name} changed on disk; not saved</source>
        <translation>{name} 在磁盘上已被修改；未保存</translation>
    </message>
    <message>
        <source>The file changed on disk but cannot be read: {reason}</source>
        <translation>文件在磁盘上已被修改，但无法读取：{reason}</translation>
    </message>
    <message>
        <source>Not saved: this file changed on disk. You have unsaved edits in {name}.</source>
        <translation>未保存：此文件在磁盘上已被修改。你在 {name} 中有未保存的编辑。</translation>
    </message>
    <message>
        <source>This file changed on disk. You have unsaved edits in {name}.</source>
        <translation>此文件在磁盘上已被修改。你在 {name} 中有未保存的编辑。</translation>
    </message>
    <message>
        <source>Reload</source>
        <translation>重新加载</translation>
    </message>
    <message>
        <source>Keep mine</source>
        <translation>保留我的</translation>
    </message>
    <message>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <source>Load the version on disk and discard my edits</source>
        <translation>加载磁盘上的版本并丢弃我的编辑</translation>
    </message>
    <message>
        <source>Keep my text; the next save overwrites the file</source>
        <translation>保留我的文本；下次保存时覆盖该文件</translation>
    </message>
    <message>
        <source>Show what differs between the disk and my text</source>
        <translation>显示磁盘上的内容与我的文本之间的差异</translation>
    </message>
    <message>
        <source>{name} (on disk)</source>
        <translation>{name}（磁盘上）</translation>
    </message>
    <message>
        <source>{name} (yours, unsaved)</source>
        <translation>{name}（你的，未保存）</translation>
    </message>
    <message>
        <source>Could not compare: {error}</source>
        <translation>无法对比：{error}</translation>
    </message>
    <message>
        <source>Changes from the file on disk to your unsaved text — {name}</source>
        <translation>从磁盘上的文件到你未保存文本的更改 — {name}</translation>
    </message>
    <message>
        <source>Loading {name}…</source>
        <translation>正在加载 {name}…</translation>
    </message>
    <message>
        <source>No file</source>
        <translation>没有文件</translation>
    </message>
    <message>
        <source>Cannot open {name}: {error}. Saving is disabled.</source>
        <translation>无法打开 {name}：{error}。已禁止保存。</translation>
    </message>
    <message>
        <source>{name} was deleted on disk. Saving will recreate it.</source>
        <translation>{name} 已从磁盘上删除。保存时将重新创建它。</translation>
    </message>
    <message>
        <source>{name} does not exist yet; saving will create it.</source>
        <translation>{name} 还不存在；保存时将创建它。</translation>
    </message>
    <message>
        <source>{name} is not UTF-8: shown with replacement characters, saving disabled.</source>
        <translation>{name} 不是 UTF-8 编码：以替换字符显示，已禁止保存。</translation>
    </message>
    <message>
        <source>This file mixes line-ending styles; saving will write every line break as LF.</source>
        <translation>此文件混用了多种换行符；保存时所有换行都将写为 LF。</translation>
    </message>
    <message>
        <source>Large file ({size}): syntax highlighting is off.</source>
        <translation>文件较大（{size}）：已关闭语法高亮。</translation>
    </message>
    <message>
        <source>{size} MB</source>
        <translation>{size} MB</translation>
    </message>
    <message>
        <source>{size} KB</source>
        <translation>{size} KB</translation>
    </message>
    <message>
        <source>%n byte(s)</source>
        <translation>%n 字节</translation>
    </message>
    <message>
        <source>Find</source>
        <translation>查找</translation>
    </message>
    <message>
        <source>Previous match (Shift+Enter)</source>
        <translation>上一个匹配（Shift+Enter）</translation>
    </message>
    <message>
        <source>Previous match</source>
        <translation>上一个匹配</translation>
    </message>
    <message>
        <source>Next match (Enter)</source>
        <translation>下一个匹配（Enter）</translation>
    </message>
    <message>
        <source>Next match</source>
        <translation>下一个匹配</translation>
    </message>
    <message>
        <source>Close (Esc)</source>
        <translation>关闭（Esc）</translation>
    </message>
    <message>
        <source>Close find</source>
        <translation>关闭查找</translation>
    </message>
    <message>
        <source>No matches</source>
        <translation>无匹配</translation>
    </message>
    <message>
        <source>{current} of {total}</source>
        <translation>第 {current} 个，共 {total} 个</translation>
    </message>
    <message>
        <source>%n match(es)</source>
        <translation>%n 个匹配</translation>
    </message>
    <message>
        <source>Find in file (Ctrl+F)</source>
        <translation>在文件中查找（Ctrl+F）</translation>
    </message>
    <message>
        <source>Preview</source>
        <translation>预览</translation>
    </message>
    <message>
        <source>Rendered preview (Ctrl+Shift+P)</source>
        <translation>渲染预览（Ctrl+Shift+P）</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Save (Ctrl+S)</source>
        <translation>保存（Ctrl+S）</translation>
    </message>
    <message>
        <source>File contents</source>
        <translation>文件内容</translation>
    </message>
    <message>
        <source>Too large to preview ({size}).</source>
        <translation>文件太大，无法预览（{size}）。</translation>
    </message>
    <message>
        <source>{name} — unsaved changes</source>
        <translation>{name} — 有未保存的更改</translation>
    </message>
</context>
<context>
    <name>Heartbeat</name>
    <message>
        <source>skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <source>model: nothing to do</source>
        <translation>模型：无事可做</translation>
    </message>
    <message>
        <source>ran</source>
        <translation>已运行</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>no HEARTBEAT.md</source>
        <translation>没有 HEARTBEAT.md</translation>
    </message>
    <message>
        <source>file empty</source>
        <translation>文件为空</translation>
    </message>
    <message>
        <source>template only</source>
        <translation>只有模板</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>another program runs it</source>
        <translation>由其他程序运行</translation>
    </message>
    <message>
        <source>usage budget spent</source>
        <translation>用量预算已用完</translation>
    </message>
    <message>
        <source>manual</source>
        <translation>手动</translation>
    </message>
    <message>
        <source>timer</source>
        <translation>定时</translation>
    </message>
    <message>
        <source>Tools: {tools}</source>
        <translation>工具：{tools}</translation>
    </message>
    <message>
        <source>Waited for your approval: {tools}</source>
        <translation>等待过你的批准：{tools}</translation>
    </message>
    <message>
        <source>Started by: you (Run now); took {duration}</source>
        <translation>启动者：你（立即运行）；用时 {duration}</translation>
    </message>
    <message>
        <source>Started by: the timer; took {duration}</source>
        <translation>启动者：定时器；用时 {duration}</translation>
    </message>
    <message>
        <source>Late: {note}.</source>
        <translation>延迟：{note}。</translation>
    </message>
    <message>
        <source>Why: {reason}.</source>
        <translation>原因：{reason}。</translation>
    </message>
    <message>
        <source>The model was not asked.</source>
        <translation>没有询问模型。</translation>
    </message>
    <message>
        <source>The model read HEARTBEAT.md and answered:</source>
        <translation>模型读取了 HEARTBEAT.md 并答复：</translation>
    </message>
    <message>
        <source>Tasks:</source>
        <translation>任务：</translation>
    </message>
    <message>
        <source>Error:</source>
        <translation>错误：</translation>
    </message>
    <message>
        <source>Result:</source>
        <translation>结果：</translation>
    </message>
    <message>
        <source>The run finished without a reply (a message may have been sent instead).</source>
        <translation>运行已结束，没有回复（可能改为发送了一条消息）。</translation>
    </message>
    <message>
        <source>the model found nothing to do</source>
        <translation>模型认为无事可做</translation>
    </message>
    <message>
        <source>Tasks: {tasks}</source>
        <translation>任务：{tasks}</translation>
    </message>
    <message>
        <source>HEARTBEAT.md does not exist</source>
        <translation>HEARTBEAT.md 不存在</translation>
    </message>
    <message>
        <source>HEARTBEAT.md is empty</source>
        <translation>HEARTBEAT.md 为空</translation>
    </message>
    <message>
        <source>HEARTBEAT.md holds only headings, comments and template lines</source>
        <translation>HEARTBEAT.md 只有标题、注释和模板行</translation>
    </message>
    <message>
        <source>The next check sends this file to the model, because of the %n tinted line(s) you wrote (line(s) {numbers}). The model decides whether there is something to do.</source>
        <translation>下次检查会把此文件发送给模型，因为你写了 %n 行带底色的内容（第 {numbers} 行）。由模型判断是否有事要做。</translation>
    </message>
    <message>
        <source>The next check skips without asking the model: {reason}. Write a task anywhere in the file to have it read.</source>
        <translation>下次检查将跳过，不询问模型：{reason}。在文件中任意位置写下任务，它就会被读取。</translation>
    </message>
    <message>
        <source>Heartbeat</source>
        <translation>心跳</translation>
    </message>
    <message>
        <source>Run now</source>
        <translation>立即运行</translation>
    </message>
    <message>
        <source>Check HEARTBEAT.md now and run the tasks the model finds</source>
        <translation>立即检查 HEARTBEAT.md 并运行模型找到的任务</translation>
    </message>
    <message>
        <source>Enabled</source>
        <translation>已启用</translation>
    </message>
    <message>
        <source>Check HEARTBEAT.md periodically while the app runs (saved in config.json)</source>
        <translation>应用运行时定期检查 HEARTBEAT.md（保存在 config.json 中）</translation>
    </message>
    <message>
        <source>every </source>
        <translation>每隔 </translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>No heartbeat yet this session. “Run now” checks HEARTBEAT.md at once.</source>
        <translation>本次还没有心跳。“立即运行”会马上检查 HEARTBEAT.md。</translation>
    </message>
    <message>
        <source>Select a tick to see its tasks and result.</source>
        <translation>选择一次心跳以查看其任务和结果。</translation>
    </message>
    <message>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <source>Show the heartbeat&apos;s conversation in the chat</source>
        <translation>在对话中显示心跳的会话</translation>
    </message>
    <message>
        <source>nanobot 0.3 workspace: its gateway runs the heartbeat too, as its protected “heartbeat” job (Scheduled view), from the same HEARTBEAT.md. This heartbeat is the app&apos;s own, while the app runs.</source>
        <translation>nanobot 0.3 工作区：其网关也会根据同一个 HEARTBEAT.md 运行心跳，作为受保护的“heartbeat”任务（见“定时任务”视图）。这里的心跳属于本应用，仅在应用运行时进行。</translation>
    </message>
    <message>
        <source>HEARTBEAT.md — what each check reads. Write periodic tasks anywhere in it.</source>
        <translation>HEARTBEAT.md — 每次检查读取的内容。可在其中任意位置写下周期性任务。</translation>
    </message>
    <message>
        <source>Not saved: {error}</source>
        <translation>未保存：{error}</translation>
    </message>
    <message>
        <source>Saving HEARTBEAT.md, then checking…</source>
        <translation>正在保存 HEARTBEAT.md，然后检查…</translation>
    </message>
    <message>
        <source>HEARTBEAT.md could not be saved, so nothing was run (see the editor).</source>
        <translation>HEARTBEAT.md 无法保存，因此没有运行任何任务（见编辑器）。</translation>
    </message>
    <message>
        <source>Waiting for your approval: {tools} — answer in the notification, the tray menu or the heartbeat session (Open session).</source>
        <translation>等待你的批准：{tools} — 请在通知、托盘菜单或心跳会话（打开会话）中答复。</translation>
    </message>
    <message>
        <source>Checking HEARTBEAT.md now…</source>
        <translation>正在检查 HEARTBEAT.md…</translation>
    </message>
    <message>
        <source>The periodic check is off; “Run now” still works.</source>
        <translation>定期检查已关闭；“立即运行”仍然可用。</translation>
    </message>
    <message>
        <source>Paused (from the tray): timer ticks are skipped; “Run now” still works.</source>
        <translation>已暂停（从托盘）：定时检查会被跳过；“立即运行”仍然可用。</translation>
    </message>
    <message>
        <source>Not checked by the app: {reason}. “Run now” still works.</source>
        <translation>本应用不做检查：{reason}。“立即运行”仍然可用。</translation>
    </message>
    <message>
        <source>The periodic check starts with the app&apos;s background services.</source>
        <translation>定期检查会随应用的后台服务一起启动。</translation>
    </message>
    <message>
        <source>Next check at {time} (in {minutes} min).</source>
        <translation>下次检查于 {time}（{minutes} 分钟后）。</translation>
    </message>
    <message>
        <source>This machine runs the checks for the workspace it shares with {machines}.</source>
        <translation>本机为与 {machines} 共享的工作区运行这些检查。</translation>
    </message>
</context>
<context>
    <name>Inspector</name>
    <message>
        <source>part {number}</source>
        <translation>第 {number} 部分</translation>
    </message>
    <message>
        <source>[image: {mime}, {size} KB inline]</source>
        <translation>[图片：{mime}，内嵌 {size} KB]</translation>
    </message>
    <message>
        <source>[image: {url}]</source>
        <translation>[图片：{url}]</translation>
    </message>
    <message>
        <source>{role} (this turn)</source>
        <translation>{role}（本轮）</translation>
    </message>
    <message>
        <source>The section sizes reported for this call do not match the prompt text; shown split at separators.</source>
        <translation>此次调用报告的各部分大小与提示词文本不符；已按分隔符拆分显示。</translation>
    </message>
    <message>
        <source>System prompt (%n section(s))</source>
        <translation>系统提示词（%n 个部分）</translation>
    </message>
    <message>
        <source>Messages ({count})</source>
        <translation>消息（{count}）</translation>
    </message>
    <message>
        <source>Tools ({count})</source>
        <translation>工具（{count}）</translation>
    </message>
    <message>
        <source>system prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>%n message(s)</source>
        <translation>%n 条消息</translation>
    </message>
    <message>
        <source>%n tool(s)</source>
        <translation>%n 个工具</translation>
    </message>
    <message>
        <source>Sent: {parts} — {total} characters (system {system} · messages {messages} · tools {tools})</source>
        <translation>已发送：{parts} — 共 {total} 个字符（系统 {system} · 消息 {messages} · 工具 {tools}）</translation>
    </message>
    <message>
        <source>{tokens} prompt tokens</source>
        <translation>{tokens} 个提示 token</translation>
    </message>
    <message>
        <source>Sent to the model</source>
        <translation>发送给模型的内容</translation>
    </message>
    <message>
        <source>Characters</source>
        <translation>字符数</translation>
    </message>
    <message>
        <source>Select a part to see its text</source>
        <translation>选择一个部分以查看其文本</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>Copy this part&apos;s text</source>
        <translation>复制此部分的文本</translation>
    </message>
    <message>
        <source>{part} — {count} characters</source>
        <translation>{part} — {count} 个字符</translation>
    </message>
    <message>
        <source>{count} more characters: select one part</source>
        <translation>还有 {count} 个字符：请选择单个部分</translation>
    </message>
    <message>
        <source>Call</source>
        <translation>调用</translation>
    </message>
    <message>
        <source>Tokens / argument</source>
        <translation>Token / 参数</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <source>LLM call to {model}: {status}</source>
        <translation>对 {model} 的 LLM 调用：{status}</translation>
    </message>
    <message>
        <source>{prompt} prompt + {completion} completion tokens</source>
        <translation>提示 {prompt} + 补全 {completion} 个 token</translation>
    </message>
    <message>
        <source>finish reason: {reason}</source>
        <translation>结束原因：{reason}</translation>
    </message>
    <message>
        <source>error: {error}</source>
        <translation>错误：{error}</translation>
    </message>
    <message>
        <source>{name}: {status} in {duration}</source>
        <translation>{name}：{status}，用时 {duration}</translation>
    </message>
    <message>
        <source>This turn&apos;s record could not be read back from the temporary file.</source>
        <translation>无法从临时文件读回这一轮的记录。</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Copy the arguments as JSON</source>
        <translation>以 JSON 格式复制参数</translation>
    </message>
    <message>
        <source>Change shown for approval</source>
        <translation>待批准的更改</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>Expand</source>
        <translation>展开</translation>
    </message>
    <message>
        <source>Copy the whole result</source>
        <translation>复制完整结果</translation>
    </message>
    <message>
        <source>(waiting for the user&apos;s answer)</source>
        <translation>（等待用户答复）</translation>
    </message>
    <message>
        <source>(still running)</source>
        <translation>（仍在运行）</translation>
    </message>
    <message>
        <source>%n line(s)</source>
        <translation>%n 行</translation>
    </message>
    <message>
        <source>{count} characters</source>
        <translation>{count} 个字符</translation>
    </message>
    <message>
        <source>Collapse</source>
        <translation>收起</translation>
    </message>
    <message>
        <source>(%n more line(s): Expand)</source>
        <translation>（还有 %n 行：展开）</translation>
    </message>
    <message>
        <source>LLM call · {model}</source>
        <translation>LLM 调用 · {model}</translation>
    </message>
    <message>
        <source>Waiting for the model…</source>
        <translation>正在等待模型…</translation>
    </message>
    <message>
        <source>Tokens: {sent} in · {received} out    Latency: {latency}    Finish: {reason}</source>
        <translation>Token：输入 {sent} · 输出 {received}    延迟：{latency}    结束：{reason}</translation>
    </message>
    <message>
        <source>Error: {error}</source>
        <translation>错误：{error}</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>检查器</translation>
    </message>
    <message>
        <source>Turn</source>
        <translation>轮次</translation>
    </message>
    <message>
        <source>Turns of this session since the app started; the newest follows new turns</source>
        <translation>本次启动以来此会话的轮次；最新的一项会跟随新轮次</translation>
    </message>
    <message>
        <source>Turn summary</source>
        <translation>轮次摘要</translation>
    </message>
    <message>
        <source>Calls of the turn</source>
        <translation>本轮的调用</translation>
    </message>
    <message>
        <source>Model and tool calls in order; select one to see its details</source>
        <translation>按顺序列出的模型和工具调用；选择一项查看详情</translation>
    </message>
    <message>
        <source>This conversation: {tokens} tokens, {cost} in %n call(s)</source>
        <translation>本对话：{tokens} 个 token，{cost}，共 %n 次调用</translation>
    </message>
    <message>
        <source>No turns yet</source>
        <translation>还没有轮次</translation>
    </message>
    <message>
        <source>No turns in this session since the app started.
The calls of its next turn will appear here.</source>
        <translation>本次启动以来此会话还没有轮次。
下一轮的调用将显示在这里。</translation>
    </message>
    <message>
        <source>No session selected.</source>
        <translation>未选择会话。</translation>
    </message>
    <message>
        <source>Select a call above to see its details.</source>
        <translation>在上方选择一个调用以查看详情。</translation>
    </message>
    <message>
        <source>%n LLM call(s)</source>
        <translation>%n 次 LLM 调用</translation>
    </message>
    <message>
        <source>{sent} → {received} tokens</source>
        <translation>{sent} → {received} 个 token</translation>
    </message>
    <message>
        <source>%n tool call(s)</source>
        <translation>%n 次工具调用</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>awaiting approval</source>
        <translation>等待批准</translation>
    </message>
    <message>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>denied</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Context: {used} / {window} tokens ({percent} %)</source>
        <translation>上下文：{used} / {window} 个 token（{percent}%）</translation>
    </message>
    <message>
        <source>First token: {seconds} s</source>
        <translation>首个 token：{seconds} 秒</translation>
    </message>
    <message>
        <source>{rate} tokens/s</source>
        <translation>{rate} token/秒</translation>
    </message>
    <message>
        <source>LLM · {model}</source>
        <translation>LLM · {model}</translation>
    </message>
    <message>
        <source>(subagent)</source>
        <translation>（子代理）</translation>
    </message>
    <message>
        <source>(no text)</source>
        <translation>（无文本）</translation>
    </message>
    <message>
        <source>Turn {number} · {clock} · {text}</source>
        <translation>第 {number} 轮 · {clock} · {text}</translation>
    </message>
</context>
<context>
    <name>Language</name>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
</context>
<context>
    <name>Layout</name>
    <message>
        <source>memory/history.jsonl exists</source>
        <translation>存在 memory/history.jsonl</translation>
    </message>
    <message>
        <source>memory/HISTORY.md exists</source>
        <translation>存在 memory/HISTORY.md</translation>
    </message>
    <message>
        <source>the workspace has a sessions/ folder</source>
        <translation>工作区中有 sessions/ 文件夹</translation>
    </message>
    <message>
        <source>chosen for a new workspace</source>
        <translation>为新工作区选择了此布局</translation>
    </message>
    <message>
        <source>the config has nanobot 0.3 keys (contextWindowTokens, dream)</source>
        <translation>配置中有 nanobot 0.3 的键（contextWindowTokens、dream）</translation>
    </message>
    <message>
        <source>no nanobot 0.3 marks on disk</source>
        <translation>磁盘上没有 nanobot 0.3 的标记</translation>
    </message>
    <message>
        <source>{path} exists</source>
        <translation>存在 {path}</translation>
    </message>
</context>
<context>
    <name>MCP</name>
    <message>
        <source>Local command (stdio)</source>
        <translation>本地命令（stdio）</translation>
    </message>
    <message>
        <source>HTTP (streamable)</source>
        <translation>HTTP（可流式）</translation>
    </message>
    <message>
        <source>Edit MCP server</source>
        <translation>编辑 MCP 服务器</translation>
    </message>
    <message>
        <source>Add MCP server</source>
        <translation>添加 MCP 服务器</translation>
    </message>
    <message>
        <source>letters, digits, _ and - (part of the tool names)</source>
        <translation>字母、数字、_ 和 -（会成为工具名称的一部分）</translation>
    </message>
    <message>
        <source>e.g. uvx, npx, or a full path</source>
        <translation>例如 uvx、npx 或完整路径</translation>
    </message>
    <message>
        <source>e.g. mcp-server-time --local-timezone &quot;Europe/Paris&quot;</source>
        <translation>例如 mcp-server-time --local-timezone &quot;Asia/Shanghai&quot;</translation>
    </message>
    <message>
        <source>NAME=value, one per line</source>
        <translation>NAME=value，每行一个</translation>
    </message>
    <message>
        <source>Name: value, one per line (e.g. Authorization: Bearer …)</source>
        <translation>Name: value，每行一个（例如 Authorization: Bearer …）</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>Headers</source>
        <translation>请求头</translation>
    </message>
    <message>
        <source>Tool timeout</source>
        <translation>工具超时</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>Start the server with these settings, list its tools, stop it again</source>
        <translation>用这些设置启动服务器，列出其工具，然后再停止</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Testing: starting the server and listing its tools…</source>
        <translation>正在测试：启动服务器并列出其工具…</translation>
    </message>
    <message>
        <source>no tools</source>
        <translation>没有工具</translation>
    </message>
    <message>
        <source>Connected: %n tool(s) ({names}).</source>
        <translation>已连接：%n 个工具（{names}）。</translation>
    </message>
    <message>
        <source>Could not connect: {error}</source>
        <translation>无法连接：{error}</translation>
    </message>
    <message>
        <source>Not saved: {error}</source>
        <translation>未保存：{error}</translation>
    </message>
    <message>
        <source>Import MCP servers</source>
        <translation>导入 MCP 服务器</translation>
    </message>
    <message>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <source>Paste the JSON of one or more servers, in the mcpServers shape:</source>
        <translation>粘贴一个或多个服务器的 JSON，格式同 mcpServers：</translation>
    </message>
    <message>
        <source>Not imported: {error}</source>
        <translation>未导入：{error}</translation>
    </message>
    <message>
        <source>disabled</source>
        <translation>已停用</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Ask first</source>
        <translation>先询问</translation>
    </message>
    <message>
        <source>Allow</source>
        <translation>允许</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>Add server…</source>
        <translation>添加服务器…</translation>
    </message>
    <message>
        <source>Import JSON…</source>
        <translation>导入 JSON…</translation>
    </message>
    <message>
        <source>No MCP servers yet. Add one, or import the JSON another app uses.</source>
        <translation>还没有 MCP 服务器。添加一个，或者导入其他应用使用的 JSON。</translation>
    </message>
    <message>
        <source>Enabled</source>
        <translation>已启用</translation>
    </message>
    <message>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <source>Restart</source>
        <translation>重启</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Before its tools run:</source>
        <translation>运行其工具之前：</translation>
    </message>
    <message>
        <source>Same as the server</source>
        <translation>与服务器相同</translation>
    </message>
    <message>
        <source>This tool:</source>
        <translation>此工具：</translation>
    </message>
    <message>
        <source>Input schema</source>
        <translation>输入 schema</translation>
    </message>
    <message>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Log</source>
        <translation>日志</translation>
    </message>
    <message>
        <source>local command</source>
        <translation>本地命令</translation>
    </message>
    <message>
        <source>failed — {error}</source>
        <translation>失败 — {error}</translation>
    </message>
    <message>
        <source>State: {state}</source>
        <translation>状态：{state}</translation>
    </message>
    <message>
        <source>Last lines of its stderr:</source>
        <translation>其 stderr 的最后几行：</translation>
    </message>
    <message>
        <source>{tool}  (not offered: enabledTools)</source>
        <translation>{tool}  （未提供：enabledTools）</translation>
    </message>
    <message>
        <source>No tools listed yet.</source>
        <translation>还没有列出工具。</translation>
    </message>
    <message>
        <source>(nothing logged yet: a local server&apos;s stderr appears here)</source>
        <translation>（还没有日志：本地服务器的 stderr 会显示在这里）</translation>
    </message>
    <message>
        <source>Remove MCP server</source>
        <translation>移除 MCP 服务器</translation>
    </message>
    <message>
        <source>Remove the MCP server “{name}” from the config? Its tools go away at once.</source>
        <translation>要从配置中移除 MCP 服务器“{name}”吗？它的工具会立即消失。</translation>
    </message>
    <message>
        <source>Testing {name}: starting it separately and listing its tools…</source>
        <translation>正在测试 {name}：单独启动它并列出其工具…</translation>
    </message>
    <message>
        <source>Test of {name}: connected, %n tool(s).</source>
        <translation>{name} 测试：已连接，%n 个工具。</translation>
    </message>
    <message>
        <source>Test of {name}: could not connect: {error}</source>
        <translation>{name} 测试：无法连接：{error}</translation>
    </message>
    <message>
        <source>Restarting {name}…</source>
        <translation>正在重启 {name}…</translation>
    </message>
</context>
<context>
    <name>Memory</name>
    <message>
        <source>Entry {cursor}, {time} — from {session}</source>
        <translation>第 {cursor} 条，{time} —— 来自 {session}</translation>
    </message>
    <message>
        <source>Entry {cursor}, {time}</source>
        <translation>第 {cursor} 条，{time}</translation>
    </message>
    <message>
        <source>History — memory/history.jsonl (newest last)</source>
        <translation>历史 —— memory/history.jsonl（最新的在最后）</translation>
    </message>
    <message>
        <source>Search the history…</source>
        <translation>搜索历史…</translation>
    </message>
    <message>
        <source>Add entry</source>
        <translation>添加条目</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>What happened (one entry; the time is added)</source>
        <translation>发生了什么（一条记录；时间会自动添加）</translation>
    </message>
    <message>
        <source>Save entry</source>
        <translation>保存条目</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Could not read history.jsonl: {error}</source>
        <translation>无法读取 history.jsonl：{error}</translation>
    </message>
    <message>
        <source>1 matching entry</source>
        <translation>1 条匹配的条目</translation>
    </message>
    <message>
        <source>{count} matching entries</source>
        <translation>{count} 条匹配的条目</translation>
    </message>
    <message>
        <source>No history yet: consolidation and Dream add entries here.</source>
        <translation>还没有历史：记忆整理和 Dream 会在这里添加条目。</translation>
    </message>
    <message>
        <source>An entry needs some text.</source>
        <translation>条目需要有内容。</translation>
    </message>
    <message>
        <source>Could not save the entry: {error}</source>
        <translation>无法保存条目：{error}</translation>
    </message>
    <message>
        <source>Search history: every word, any case</source>
        <translation>搜索历史：包含所有词，不区分大小写</translation>
    </message>
    <message>
        <source>Shows only the HISTORY.md entries containing all the words (Esc clears)</source>
        <translation>只显示包含所有这些词的 HISTORY.md 条目（Esc 清除）</translation>
    </message>
    <message>
        <source>Double-click an entry to show it in HISTORY.md</source>
        <translation>双击条目可在 HISTORY.md 中显示它</translation>
    </message>
    <message>
        <source>Search failed</source>
        <translation>搜索失败</translation>
    </message>
    <message>
        <source>Could not search HISTORY.md: {error}</source>
        <translation>无法搜索 HISTORY.md：{error}</translation>
    </message>
    <message>
        <source>No entry of HISTORY.md contains {words}.</source>
        <translation>HISTORY.md 中没有条目同时包含 {words}。</translation>
    </message>
    <message>
        <source> and </source>
        <translation> 和 </translation>
    </message>
    <message>
        <source>{matched} of {total} entries match (first {shown} shown)</source>
        <translation>{total} 条中有 {matched} 条匹配（显示前 {shown} 条）</translation>
    </message>
    <message>
        <source>{matched} of 1 entry match</source>
        <translation>1 条中有 {matched} 条匹配</translation>
    </message>
    <message>
        <source>{matched} of {total} entries match</source>
        <translation>{total} 条中有 {matched} 条匹配</translation>
    </message>
    <message>
        <source>your save</source>
        <translation>你的保存</translation>
    </message>
    <message>
        <source>consolidation</source>
        <translation>记忆整理</translation>
    </message>
    <message>
        <source>a restore</source>
        <translation>一次恢复</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>保存时间</translation>
    </message>
    <message>
        <source>Replaced by</source>
        <translation>替换来源</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Committed</source>
        <translation>提交时间</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>更改</translation>
    </message>
    <message>
        <source>MEMORY.md as committed on {time} ({commit})

{message}</source>
        <translation>{time} 提交的 MEMORY.md（{commit}）

{message}</translation>
    </message>
    <message>
        <source>MEMORY.md as it was on {time}, kept when {replacer} replaced it
{path}</source>
        <translation>{time} 时的 MEMORY.md，在被{replacer}替换时保留
{path}</translation>
    </message>
    <message>
        <source>Consolidating…</source>
        <translation>正在整理记忆…</translation>
    </message>
    <message>
        <source>The agent is folding older messages into MEMORY.md and HISTORY.md</source>
        <translation>代理正在把较早的消息整理进 MEMORY.md 和 HISTORY.md</translation>
    </message>
    <message>
        <source>Restore this version</source>
        <translation>恢复这个版本</translation>
    </message>
    <message>
        <source>Put this text back into MEMORY.md (the current text is kept as a version)</source>
        <translation>把这段文本放回 MEMORY.md（当前文本会保留为一个版本）</translation>
    </message>
    <message>
        <source>Versions of MEMORY.md in the workspace&apos;s git repository (Dream&apos;s edits and your saves): select one to see what changed since.</source>
        <translation>工作区 git 仓库中 MEMORY.md 的各个版本（Dream 的编辑和你的保存）：选择一个版本，查看此后的更改。</translation>
    </message>
    <message>
        <source>Earlier versions of MEMORY.md: select one to see what changed since.</source>
        <translation>MEMORY.md 的早期版本：选择一个版本，查看此后的更改。</translation>
    </message>
    <message>
        <source>Whose versions to list: Dream rewrites all three</source>
        <translation>列出哪个文件的版本：Dream 会改写这三个文件</translation>
    </message>
    <message>
        <source>Could not list the versions of {name}: {error}. The list is read again at the next change.</source>
        <translation>无法列出 {name} 的版本：{error}。下次有更改时会重新读取列表。</translation>
    </message>
    <message>
        <source>Put this text back into {name} (as a new commit)</source>
        <translation>把这段文本放回 {name}（作为一次新的提交）</translation>
    </message>
    <message>
        <source>Could not compare the versions ({error}). Select the version again.</source>
        <translation>无法比较版本（{error}）。请重新选择该版本。</translation>
    </message>
    <message>
        <source>Version of {time} → current</source>
        <translation>{time} 的版本 → 当前</translation>
    </message>
    <message>
        <source>Could not restore the version of {time}: {error}. Try again, or copy the text from the diff below.</source>
        <translation>无法恢复 {time} 的版本：{error}。请再试一次，或从下方的差异中复制文本。</translation>
    </message>
    <message>
        <source>Your unsaved edits are kept: the bar above them lets you choose.</source>
        <translation>你未保存的编辑已保留：可在它们上方的提示栏中选择。</translation>
    </message>
    <message>
        <source>Restored {name} as of {time}. The text it replaced is kept as a version.</source>
        <translation>已把 {name} 恢复到 {time} 的版本。被替换的文本已保留为一个版本。</translation>
    </message>
    <message>
        <source>Older messages could not be summarised into memory this time; MEMORY.md and HISTORY.md were left as they were.</source>
        <translation>这次未能把较早的消息总结进记忆；MEMORY.md 和 HISTORY.md 保持原样。</translation>
    </message>
</context>
<context>
    <name>Notices</name>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>Onboarding</name>
    <message>
        <source>Choose a folder for the workspace.</source>
        <translation>请为工作区选择一个文件夹。</translation>
    </message>
    <message>
        <source>{path} is a file, not a folder: choose a folder.</source>
        <translation>{path} 是文件而不是文件夹：请选择一个文件夹。</translation>
    </message>
    <message>
        <source>A new workspace will be created in this folder.</source>
        <translation>将在这个文件夹中创建新的工作区。</translation>
    </message>
    <message>
        <source>Existing nanobot 0.3 workspace found — it will be used as is, in nanobot 0.3&apos;s layout.</source>
        <translation>找到已有的 nanobot 0.3 工作区 —— 将按 nanobot 0.3 的布局原样使用。</translation>
    </message>
    <message>
        <source>%n session(s)</source>
        <translation>%n 个会话</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>%n skill(s)</source>
        <translation>%n 个技能</translation>
    </message>
    <message>
        <source>Existing nanobot workspace found: {contents} — it will be used as is.</source>
        <translation>找到已有的 nanobot 工作区：{contents} —— 将原样使用。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Existing nanobot workspace found — it will be used as is.</source>
        <translation>找到已有的 nanobot 工作区 —— 将原样使用。</translation>
    </message>
    <message>
        <source>This folder is not empty. The workspace files will be added next to what is there; nothing in it is changed.</source>
        <translation>这个文件夹不是空的。工作区文件会添加到已有内容旁边；其中的内容不会被更改。</translation>
    </message>
    <message>
        <source>This empty folder will become the workspace.</source>
        <translation>这个空文件夹将成为工作区。</translation>
    </message>
    <message>
        <source>Welcome to nanobot</source>
        <translation>欢迎使用 nanobot</translation>
    </message>
    <message>
        <source>Back</source>
        <translation>上一步</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一步</translation>
    </message>
    <message>
        <source>Finish</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>The workspace is the folder where the agent keeps its memory, skills, sessions and instructions, as plain Markdown and JSONL files. An existing nanobot workspace works unchanged.</source>
        <translation>工作区是代理存放记忆、技能、会话和指令的文件夹，全部是普通的 Markdown 和 JSONL 文件。已有的 nanobot 工作区无需改动即可使用。</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <source>Workspace folder:</source>
        <translation>工作区文件夹：</translation>
    </message>
    <message>
        <source>Set up a new workspace in nanobot 0.3&apos;s layout (for the nanobot 0.3.x command-line tool)</source>
        <translation>按 nanobot 0.3 的布局创建新工作区（供 nanobot 0.3.x 命令行工具使用）</translation>
    </message>
    <message>
        <source>Sessions beside the config, memory/history.jsonl and a git repository for Dream&apos;s versions. Leave it off for the nanobot 0.1.4 layout.</source>
        <translation>会话放在配置旁边，使用 memory/history.jsonl，并用 git 仓库保存 Dream 的版本。若使用 nanobot 0.1.4 的布局，请不要勾选。</translation>
    </message>
    <message>
        <source>The default, {folder}, is also where the nanobot command-line tool keeps its workspace, so both share the same memory and sessions.</source>
        <translation>默认位置 {folder} 也是 nanobot 命令行工具存放工作区的地方，因此两者共享同样的记忆和会话。</translation>
    </message>
    <message>
        <source>Choose the workspace folder</source>
        <translation>选择工作区文件夹</translation>
    </message>
    <message>
        <source>Model servers on this computer</source>
        <translation>本机上的模型服务器</translation>
    </message>
    <message>
        <source>Scan again</source>
        <translation>重新扫描</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>端点</translation>
    </message>
    <message>
        <source>Looking for {servers} on this computer…</source>
        <translation>正在本机上查找 {servers}…</translation>
    </message>
    <message>
        <source>Could not look for local servers: {error}</source>
        <translation>无法查找本地服务器：{error}</translation>
    </message>
    <message>
        <source>%n model(s): {models}</source>
        <translation>%n 个模型：{models}</translation>
    </message>
    <message>
        <source>no models yet</source>
        <translation>还没有模型</translation>
    </message>
    <message>
        <source>Found {server} on this computer and selected it. You can enter another endpoint below instead.</source>
        <translation>在本机上找到 {server}，已选中它。你也可以在下方输入其他端点。</translation>
    </message>
    <message>
        <source>Found %n server(s). Choose one to use it, or enter an endpoint below.</source>
        <translation>找到 %n 个服务器。选择一个即可使用，或在下方输入端点。</translation>
    </message>
    <message>
        <source>No local model server found (looked for {servers}). Enter an endpoint and key below.</source>
        <translation>没有找到本地模型服务器（查找了 {servers}）。请在下方输入端点和密钥。</translation>
    </message>
    <message>
        <source>No local model server found. Enter an endpoint and key below.</source>
        <translation>没有找到本地模型服务器。请在下方输入端点和密钥。</translation>
    </message>
    <message>
        <source>&lt;b&gt;Step 1 of 2 — Workspace&lt;/b&gt;</source>
        <translation>&lt;b&gt;第 1 步，共 2 步 —— 工作区&lt;/b&gt;</translation>
    </message>
    <message>
        <source>&lt;b&gt;Step 2 of 2 — Model&lt;/b&gt;</source>
        <translation>&lt;b&gt;第 2 步，共 2 步 —— 模型&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Setup could not finish: {error}</source>
        <translation>设置未能完成：{error}</translation>
    </message>
</context>
<context>
    <name>Panels</name>
    <message>
        <source>Skills</source>
        <translation>技能</translation>
    </message>
    <message>
        <source>Show the skills manager (in the Workspace panel)</source>
        <translation>显示技能管理器（在“工作区”面板中）</translation>
    </message>
    <message>
        <source>Show or hide the {title} panel</source>
        <translation>显示或隐藏“{title}”面板</translation>
    </message>
    <message>
        <source>Show the {title} page in place of the chat (again: back to the chat)</source>
        <translation>用“{title}”页面替换对话（再按一次：回到对话）</translation>
    </message>
    <message>
        <source>Drawer</source>
        <translation>侧栏</translation>
    </message>
    <message>
        <source>Open or close the drawer: inspector, files and skills ({shortcut})</source>
        <translation>打开或关闭侧栏：检查器、文件和技能（{shortcut}）</translation>
    </message>
    <message>
        <source>Agent pages</source>
        <translation>代理页面</translation>
    </message>
    <message>
        <source>The {title} page ({shortcut})</source>
        <translation>“{title}”页面（{shortcut}）</translation>
    </message>
    <message>
        <source>Chat and pages</source>
        <translation>对话和页面</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>The conversation</source>
        <translation>当前对话</translation>
    </message>
    <message>
        <source>Inspector</source>
        <translation>检查器</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Heartbeat</source>
        <translation>心跳</translation>
    </message>
    <message>
        <source>Scheduled</source>
        <translation>定时任务</translation>
    </message>
    <message>
        <source>Subagents</source>
        <translation>子代理</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>代理</translation>
    </message>
    <message>
        <source>Hot reload</source>
        <translation>自动重新加载</translation>
    </message>
    <message>
        <source>Tray icon</source>
        <translation>托盘图标</translation>
    </message>
    <message>
        <source>{name}: {why}</source>
        <translation>{name}：{why}</translation>
    </message>
    <message>
        <source>Sessions</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>The {title} panel could not be loaded: {why}</source>
        <translation>无法加载“{title}”面板：{why}</translation>
    </message>
    <message>
        <source>Heartbeat, scheduled jobs, subagents and MCP servers ({shortcut})</source>
        <translation>心跳、定时任务、子代理和 MCP 服务器（{shortcut}）</translation>
    </message>
    <message>
        <source>Usage</source>
        <translation>用量</translation>
    </message>
    <message>
        <source>Close the {title} panel</source>
        <translation>关闭“{title}”面板</translation>
    </message>
</context>
<context>
    <name>Sandbox</name>
    <message>
        <source>Not sandboxed: the packaged app cannot start the sandbox launcher</source>
        <translation>未使用沙箱：打包版应用无法启动沙箱启动器</translation>
    </message>
    <message>
        <source>Not sandboxed: this kernel has no Landlock (Linux 5.13 or newer needed)</source>
        <translation>未使用沙箱：此内核不支持 Landlock（需要 Linux 5.13 或更新版本）</translation>
    </message>
    <message>
        <source>Not sandboxed: the workspace restriction is off (Settings → Tools)</source>
        <translation>未使用沙箱：工作区限制已关闭（设置 → 工具）</translation>
    </message>
    <message>
        <source>Sandboxed (Landlock ABI {abi}, PID/network namespaces)</source>
        <translation>已使用沙箱（Landlock ABI {abi}，PID/网络命名空间）</translation>
    </message>
    <message>
        <source>Sandboxed (Landlock ABI {abi}, subreaper)</source>
        <translation>已使用沙箱（Landlock ABI {abi}，subreaper 子进程收割）</translation>
    </message>
    <message>
        <source>Sandboxed (Landlock ABI {abi}, PID/network namespaces); network on</source>
        <translation>已使用沙箱（Landlock ABI {abi}，PID/网络命名空间）；网络已开启</translation>
    </message>
    <message>
        <source>Sandboxed (Landlock ABI {abi}, PID/network namespaces); network off</source>
        <translation>已使用沙箱（Landlock ABI {abi}，PID/网络命名空间）；网络已关闭</translation>
    </message>
    <message>
        <source>Sandboxed (Landlock ABI {abi}, subreaper); network on</source>
        <translation>已使用沙箱（Landlock ABI {abi}，subreaper 子进程收割）；网络已开启</translation>
    </message>
    <message>
        <source>Sandboxed (Landlock ABI {abi}, subreaper); network off</source>
        <translation>已使用沙箱（Landlock ABI {abi}，subreaper 子进程收割）；网络已关闭</translation>
    </message>
    <message>
        <source>Not sandboxed: no sandbox is wired up on {platform}</source>
        <translation>未使用沙箱：{platform} 上尚未接入沙箱</translation>
    </message>
</context>
<context>
    <name>Scheduled</name>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>minutes</source>
        <translation>分钟</translation>
    </message>
    <message>
        <source>hours</source>
        <translation>小时</translation>
    </message>
    <message>
        <source>days</source>
        <translation>天</translation>
    </message>
    <message>
        <source>milliseconds</source>
        <translation>毫秒</translation>
    </message>
    <message>
        <source>Run once now</source>
        <translation>立即运行一次</translation>
    </message>
    <message>
        <source>Skip</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>New job</source>
        <translation>新建任务</translation>
    </message>
    <message>
        <source>e.g. Morning summary (optional)</source>
        <translation>例如：早间摘要（可选）</translation>
    </message>
    <message>
        <source>Every …</source>
        <translation>每隔 …</translation>
    </message>
    <message>
        <source>Cron expression</source>
        <translation>Cron 表达式</translation>
    </message>
    <message>
        <source>Once at …</source>
        <translation>仅一次，于 …</translation>
    </message>
    <message>
        <source>minute hour day month weekday, e.g. 0 9 * * 1-5</source>
        <translation>分 时 日 月 星期，例如 0 9 * * 1-5</translation>
    </message>
    <message>
        <source>IANA zone, e.g. Europe/Berlin (empty: this computer&apos;s)</source>
        <translation>IANA 时区，例如 Asia/Shanghai（留空：使用本机时区）</translation>
    </message>
    <message>
        <source>Delete the job after it ran</source>
        <translation>运行后删除该任务</translation>
    </message>
    <message>
        <source>Default ({rule})</source>
        <translation>默认（{rule}）</translation>
    </message>
    <message>
        <source>Runs missed while the app was closed or the computer slept: run the job once as soon as that is noticed, or skip them (they are listed either way)</source>
        <translation>应用关闭或电脑休眠期间错过的运行：一发现就运行一次，或者跳过（两种情况都会列出）</translation>
    </message>
    <message>
        <source>What the agent should do when the job fires</source>
        <translation>任务触发时代理要做的事</translation>
    </message>
    <message>
        <source>Add job</source>
        <translation>添加任务</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行方式</translation>
    </message>
    <message>
        <source>Every</source>
        <translation>间隔</translation>
    </message>
    <message>
        <source>Time zone</source>
        <translation>时区</translation>
    </message>
    <message>
        <source>If runs were missed</source>
        <translation>错过运行时</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Expression</source>
        <translation>表达式</translation>
    </message>
    <message>
        <source>At</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Edit “{name}”</source>
        <translation>编辑“{name}”</translation>
    </message>
    <message>
        <source>Save changes</source>
        <translation>保存更改</translation>
    </message>
    <message>
        <source>due now</source>
        <translation>即将运行</translation>
    </message>
    <message>
        <source>in {count} s ({time})</source>
        <translation>{count} 秒后（{time}）</translation>
    </message>
    <message>
        <source>in {count} min ({time})</source>
        <translation>{count} 分钟后（{time}）</translation>
    </message>
    <message>
        <source>in {count} h ({time})</source>
        <translation>{count} 小时后（{time}）</translation>
    </message>
    <message>
        <source>{missed}, skipped — {time}</source>
        <translation>{missed}，已跳过 — {time}</translation>
    </message>
    <message>
        <source>{missed}, running once now — {time}</source>
        <translation>{missed}，正在运行一次 — {time}</translation>
    </message>
    <message>
        <source>never ran</source>
        <translation>从未运行</translation>
    </message>
    <message>
        <source>(no reply)</source>
        <translation>（无回复）</translation>
    </message>
    <message>
        <source>run now</source>
        <translation>立即运行</translation>
    </message>
    <message>
        <source>catch-up</source>
        <translation>补运行</translation>
    </message>
    <message>
        <source>tools: {tools}</source>
        <translation>工具：{tools}</translation>
    </message>
    <message>
        <source>waited for your approval: {tools}</source>
        <translation>等待过你的批准：{tools}</translation>
    </message>
    <message>
        <source>Schedule</source>
        <translation>计划</translation>
    </message>
    <message>
        <source>Next run</source>
        <translation>下次运行</translation>
    </message>
    <message>
        <source>Last run</source>
        <translation>上次运行</translation>
    </message>
    <message>
        <source>Enabled</source>
        <translation>已启用</translation>
    </message>
    <message>
        <source>on</source>
        <translation>开</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>This job will never run: {reason}.</source>
        <translation>此任务永远不会运行：{reason}。</translation>
    </message>
    <message>
        <source>by the nanobot 0.3 gateway</source>
        <translation>由 nanobot 0.3 网关运行</translation>
    </message>
    <message>
        <source>catching up a missed run now</source>
        <translation>正在补运行错过的一次</translation>
    </message>
    <message>
        <source>never — {reason}</source>
        <translation>永不 — {reason}</translation>
    </message>
    <message>
        <source>A protected system job of nanobot 0.3: its gateway runs it (heartbeat: HEARTBEAT.md; dream: Dream&apos;s memory rewrite). The app leaves it as it is; turn it off in the config.</source>
        <translation>nanobot 0.3 受保护的系统任务：由其网关运行（heartbeat：HEARTBEAT.md；dream：Dream 的记忆重写）。本应用不会改动它；如需关闭，请在配置中关闭。</translation>
    </message>
    <message>
        <source>Scheduled</source>
        <translation>定时任务</translation>
    </message>
    <message>
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <source>Disable</source>
        <translation>停用</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Run now</source>
        <translation>立即运行</translation>
    </message>
    <message>
        <source>No scheduled jobs. Add one here, or ask the agent (“remind me every morning at 9 to …”).</source>
        <translation>还没有定时任务。在这里添加一个，或者告诉代理（“每天早上 9 点提醒我……”）。</translation>
    </message>
    <message>
        <source>Times are in this computer&apos;s time zone. Runs missed while the app was closed or the computer slept are listed in the job&apos;s history; by default the job then runs once now (Edit… to skip them instead).</source>
        <translation>时间均为本机时区。应用关闭或电脑休眠期间错过的运行会列在任务历史中；默认会随即运行一次（可通过“编辑…”改为跳过）。</translation>
    </message>
    <message>
        <source>Times are in this computer&apos;s time zone. Runs missed while the app was closed or the computer slept are listed in the job&apos;s history; by default they are skipped (Edit… to run the job once instead).</source>
        <translation>时间均为本机时区。应用关闭或电脑休眠期间错过的运行会列在任务历史中；默认会跳过（可通过“编辑…”改为运行一次）。</translation>
    </message>
    <message>
        <source>Select a job to see its message and this session&apos;s runs.</source>
        <translation>选择一个任务以查看其消息和本次会话中的运行记录。</translation>
    </message>
    <message>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <source>jobs.json cannot be used, so no job runs and nothing is saved until it is fixed: {error}</source>
        <translation>jobs.json 无法使用，在修复之前不会运行任何任务，也不会保存任何内容：{error}</translation>
    </message>
    <message>
        <source>The app does not run these jobs now: {reason}.</source>
        <translation>本应用目前不运行这些任务：{reason}。</translation>
    </message>
    <message>
        <source>This machine runs these jobs for the workspace it shares with {machines}.</source>
        <translation>本机为与 {machines} 共享的工作区运行这些任务。</translation>
    </message>
    <message>
        <source>Running…</source>
        <translation>正在运行…</translation>
    </message>
    <message>
        <source>Enable</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>If runs were missed: {rule}</source>
        <translation>错过运行时：{rule}</translation>
    </message>
    <message>
        <source>If runs were missed: {rule} (the default)</source>
        <translation>错过运行时：{rule}（默认）</translation>
    </message>
    <message>
        <source>Next run: {when}</source>
        <translation>下次运行：{when}</translation>
    </message>
    <message>
        <source>Last error: {error}</source>
        <translation>上次错误：{error}</translation>
    </message>
    <message>
        <source>History since the app started (newest first):</source>
        <translation>本次启动以来的历史（最新的在前）：</translation>
    </message>
    <message>
        <source>Click again to delete</source>
        <translation>再次点击以删除</translation>
    </message>
</context>
<context>
    <name>Sessions</name>
    <message>
        <source>Could not rename “{title}” ({reason}). Try another name.</source>
        <translation>无法重命名“{title}”（{reason}）。请换一个名称。</translation>
    </message>
    <message>
        <source>%n session(s) of the “{channel}” channel</source>
        <translation>“{channel}”渠道的 %n 个会话</translation>
    </message>
    <message>
        <source>This conversation was put aside by /new. Double-click it to continue it in a new chat.</source>
        <translation>此对话已被 /new 搁置。双击可在新对话中继续。</translation>
    </message>
    <message>
        <source>{title}
{key} · %n message(s)
updated {when} · {file}</source>
        <translation>{title}
{key} · %n 条消息
更新于 {when} · {file}</translation>
    </message>
    <message>
        <source>Show branches</source>
        <translation>显示分支</translation>
    </message>
    <message>
        <source>Search sessions  (Ctrl+K)</source>
        <translation>搜索会话（Ctrl+K）</translation>
    </message>
    <message>
        <source>Search sessions</source>
        <translation>搜索会话</translation>
    </message>
    <message>
        <source>Sessions</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>Enter opens a session; F2 renames, Delete moves it to the trash</source>
        <translation>按 Enter 打开会话；F2 重命名，Delete 移到回收站</translation>
    </message>
    <message>
        <source>Could not list the sessions in {folder} ({reason}). Check that the folder exists and can be read.</source>
        <translation>无法列出 {folder} 中的会话（{reason}）。请检查该文件夹是否存在且可读。</translation>
    </message>
    <message>
        <source>Searching the sessions failed ({reason}). Try the search again.</source>
        <translation>搜索会话失败（{reason}）。请重新搜索。</translation>
    </message>
    <message>
        <source>Could not continue the archived conversation ({reason}). Its file is still in the sessions folder&apos;s .archive.</source>
        <translation>无法继续已归档的对话（{reason}）。其文件仍在会话文件夹的 .archive 中。</translation>
    </message>
    <message>
        <source>Continue in a new chat</source>
        <translation>在新对话中继续</translation>
    </message>
    <message>
        <source>Could not delete “{title}” ({reason}). Check that the sessions folder can be written.</source>
        <translation>无法删除“{title}”（{reason}）。请检查会话文件夹是否可写。</translation>
    </message>
    <message>
        <source>Session “{title}” deleted.</source>
        <translation>已删除会话“{title}”。</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <source>Could not restore “{title}” ({reason}). Its file is still in the sessions folder&apos;s .trash.</source>
        <translation>无法恢复“{title}”（{reason}）。其文件仍在会话文件夹的 .trash 中。</translation>
    </message>
    <message>
        <source>Export session as Markdown</source>
        <translation>将会话导出为 Markdown</translation>
    </message>
    <message>
        <source>Export session as JSON</source>
        <translation>将会话导出为 JSON</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown 文件 (*.md)</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <source>Could not export to {path} ({reason}). Choose another folder.</source>
        <translation>无法导出到 {path}（{reason}）。请选择其他文件夹。</translation>
    </message>
    <message>
        <source>Desktop</source>
        <translation>桌面</translation>
    </message>
    <message>
        <source>Command line</source>
        <translation>命令行</translation>
    </message>
    <message>
        <source>Heartbeat</source>
        <translation>心跳</translation>
    </message>
    <message>
        <source>Scheduled</source>
        <translation>定时任务</translation>
    </message>
    <message>
        <source>Subagents</source>
        <translation>子代理</translation>
    </message>
    <message>
        <source>System</source>
        <translation>系统</translation>
    </message>
    <message>
        <source>Archived</source>
        <translation>已归档</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>{weekday} {time}</source>
        <translation>{weekday} {time}</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>Allow</source>
        <translation>允许</translation>
    </message>
    <message>
        <source>Ask first (notify me)</source>
        <translation>先询问（通知我）</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>In background work</source>
        <translation>后台任务中</translation>
    </message>
    <message>
        <source>Heartbeat, scheduled tasks and subagents, while you may be away: ask = a notification</source>
        <translation>心跳、定时任务和子代理在你可能不在时运行：询问 = 发送一条通知</translation>
    </message>
    <message>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <source>Background work never waits for ever: the tool call is then denied, and the run goes on</source>
        <translation>后台任务不会无限期等待：超时后该工具调用被拒绝，运行继续进行</translation>
    </message>
    <message>
        <source>Background work: an unanswered ask counts as Deny after</source>
        <translation>后台任务：询问无人回应时视为拒绝，等待</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>low</source>
        <translation>低</translation>
    </message>
    <message>
        <source>medium</source>
        <translation>中</translation>
    </message>
    <message>
        <source>high</source>
        <translation>高</translation>
    </message>
    <message>
        <source>Ask first</source>
        <translation>先询问</translation>
    </message>
    <message>
        <source>Replies, approvals, errors and background tasks</source>
        <translation>回复、批准、错误和后台任务</translation>
    </message>
    <message>
        <source>Only approvals and errors</source>
        <translation>仅批准和错误</translation>
    </message>
    <message>
        <source>None</source>
        <translation>不播报</translation>
    </message>
    <message>
        <source>When the system asks for it</source>
        <translation>系统要求时</translation>
    </message>
    <message>
        <source>On</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>代理</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Heartbeat</source>
        <translation>心跳</translation>
    </message>
    <message>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>设置页面</translation>
    </message>
    <message>
        <source>The default provider and model serve every chat that has not picked another model. Pick a preset, paste the key, then choose a model from the endpoint&apos;s list.</source>
        <translation>默认服务商和模型用于所有未另选模型的对话。选择一个预设，粘贴密钥，然后从端点的列表中选择模型。</translation>
    </message>
    <message>
        <source>Keep file and shell tools inside the workspace folder</source>
        <translation>将文件和命令行工具限制在工作区文件夹内</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>Give up on a model call when the endpoint sends nothing for this long</source>
        <translation>端点在这段时间内没有任何响应时，放弃本次模型调用</translation>
    </message>
    <message>
        <source>Give up on a reply that stops (or slows to a trickle) for this long</source>
        <translation>回复停止（或变得极慢）达到这段时间时，放弃该回复</translation>
    </message>
    <message>
        <source>Temperature:</source>
        <translation>温度：</translation>
    </message>
    <message>
        <source>Max tokens per reply:</source>
        <translation>每次回复的最大 token 数：</translation>
    </message>
    <message>
        <source>Max tool iterations:</source>
        <translation>最大工具调用轮数：</translation>
    </message>
    <message>
        <source>Memory window (messages):</source>
        <translation>记忆窗口（消息数）：</translation>
    </message>
    <message>
        <source>A nanobot 0.3 workspace uses the context window in tokens (Settings → Workspace) instead</source>
        <translation>nanobot 0.3 工作区改用以 token 计的上下文窗口（设置 → 工作区）</translation>
    </message>
    <message>
        <source>Reasoning effort:</source>
        <translation>推理强度：</translation>
    </message>
    <message>
        <source>Shell command timeout:</source>
        <translation>命令超时：</translation>
    </message>
    <message>
        <source>Wait for an answer:</source>
        <translation>等待响应：</translation>
    </message>
    <message>
        <source>Wait when a reply stalls:</source>
        <translation>回复停滞时等待：</translation>
    </message>
    <message>
        <source>Tool approvals</source>
        <translation>工具批准</translation>
    </message>
    <message>
        <source>Tool</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>When the agent calls it</source>
        <translation>代理调用时</translation>
    </message>
    <message>
        <source>Default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>&quot;Ask first&quot; shows an approval card with the full arguments before the tool runs; for background work also a notification.</source>
        <translation>“先询问”会在工具运行前显示一张包含完整参数的批准卡片；后台任务还会发送通知。</translation>
    </message>
    <message>
        <source>Check HEARTBEAT.md periodically and run the tasks it lists</source>
        <translation>定期检查 HEARTBEAT.md 并运行其中列出的任务</translation>
    </message>
    <message>
        <source>Each check reads HEARTBEAT.md; when it lists no tasks nothing is sent to the model.</source>
        <translation>每次检查都会读取 HEARTBEAT.md；其中没有任务时不会向模型发送任何内容。</translation>
    </message>
    <message>
        <source>Check every:</source>
        <translation>检查间隔：</translation>
    </message>
    <message>
        <source>Automatically (the first machine that is on)</source>
        <translation>自动（最先开机的那台机器）</translation>
    </message>
    <message>
        <source>This machine ({name})</source>
        <translation>本机（{name}）</translation>
    </message>
    <message>
        <source>Now: this machine runs them.</source>
        <translation>目前由本机运行。</translation>
    </message>
    <message>
        <source>Now: {name} runs them.</source>
        <translation>目前由 {name} 运行。</translation>
    </message>
    <message>
        <source>This workspace is shared with other machines. {now} When the chosen machine has not been seen for {minutes} min, another one takes over.</source>
        <translation>此工作区与其他机器共享。{now}所选机器超过 {minutes} 分钟未出现时，由另一台机器接管。</translation>
    </message>
    <message>
        <source>Run them on:</source>
        <translation>运行于：</translation>
    </message>
    <message>
        <source>Keep running in the tray when the window is closed</source>
        <translation>关闭窗口后在托盘中继续运行</translation>
    </message>
    <message>
        <source>Notify me when a heartbeat or scheduled task has a result</source>
        <translation>心跳或定时任务有结果时通知我</translation>
    </message>
    <message>
        <source>The language changes the next time nanobot Desktop starts.</source>
        <translation>语言将在 nanobot Desktop 下次启动时更改。</translation>
    </message>
    <message>
        <source>Theme:</source>
        <translation>主题：</translation>
    </message>
    <message>
        <source>Language:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <source>Without a tray, keep running when the window is closed</source>
        <translation>没有托盘时，关闭窗口后继续运行</translation>
    </message>
    <message>
        <source>Tray:</source>
        <translation>托盘：</translation>
    </message>
    <message>
        <source>Check for updates once a day</source>
        <translation>每天检查一次更新</translation>
    </message>
    <message>
        <source>Asks the update server (signed metadata) once a day; Help → Check for updates asks now</source>
        <translation>每天询问一次更新服务器（签名元数据）；“帮助 → 检查更新”会立即询问</translation>
    </message>
    <message>
        <source>The size of all text (Ctrl++ and Ctrl+- change it too)</source>
        <translation>所有文字的大小（也可用 Ctrl++ 和 Ctrl+- 调整）</translation>
    </message>
    <message>
        <source>High contrast:</source>
        <translation>高对比度：</translation>
    </message>
    <message>
        <source>Text size:</source>
        <translation>文字大小：</translation>
    </message>
    <message>
        <source>Screen reader announcements:</source>
        <translation>屏幕阅读器播报：</translation>
    </message>
    <message>
        <source>Fix the problems shown on the Provider page before saving.</source>
        <translation>请先修正“服务商”页面上显示的问题，再保存。</translation>
    </message>
    <message>
        <source>The settings were not saved: {reason}</source>
        <translation>设置未保存：{reason}</translation>
    </message>
    <message>
        <source>Available: nanobot waits in the tray when the window is closed.</source>
        <translation>可用：关闭窗口后 nanobot 在托盘中等待。</translation>
    </message>
    <message>
        <source>Not available on this desktop. Closing the window asks once whether to keep running in the background; “Show or Hide the Window” in the app&apos;s menu entry, or nanobot-desktop --toggle, brings it back.</source>
        <translation>此桌面没有托盘。关闭窗口时会询问一次是否在后台继续运行；应用菜单项中的“显示或隐藏窗口”或 nanobot-desktop --toggle 可让窗口重新出现。</translation>
    </message>
    <message>
        <source>Custom (OpenAI-compatible)</source>
        <translation>自定义（OpenAI 兼容）</translation>
    </message>
    <message>
        <source>Moonshot (Kimi)</source>
        <translation>月之暗面（Kimi）</translation>
    </message>
    <message>
        <source>Zhipu (GLM)</source>
        <translation>智谱（GLM）</translation>
    </message>
    <message>
        <source>DashScope (Qwen)</source>
        <translation>阿里云百炼（通义千问）</translation>
    </message>
    <message>
        <source>SiliconFlow</source>
        <translation>硅基流动</translation>
    </message>
    <message>
        <source>VolcEngine</source>
        <translation>火山引擎</translation>
    </message>
    <message>
        <source>Enter the endpoint&apos;s base URL, e.g. http://localhost:11434/v1</source>
        <translation>请输入端点的基础 URL，例如 http://localhost:11434/v1</translation>
    </message>
    <message>
        <source>The base URL must start with http:// or https://</source>
        <translation>基础 URL 必须以 http:// 或 https:// 开头</translation>
    </message>
    <message>
        <source>The port in the base URL is not a number between 1 and 65535</source>
        <translation>基础 URL 中的端口不是 1 到 65535 之间的数字</translation>
    </message>
    <message>
        <source>The base URL needs a host name after http:// or https://</source>
        <translation>基础 URL 在 http:// 或 https:// 之后需要主机名</translation>
    </message>
    <message>
        <source>No provider entry can serve the model yet: {reason}</source>
        <translation>目前没有可提供该模型的服务商条目：{reason}</translation>
    </message>
    <message>
        <source>{entry} serves {model} (agents.defaults.provider is &quot;{provider}&quot;), in the app and in the nanobot CLI.</source>
        <translation>{entry} 提供 {model}（agents.defaults.provider 为 &quot;{provider}&quot;），在本应用和 nanobot CLI 中都是如此。</translation>
    </message>
    <message>
        <source>{entry} serves {model} (chosen by the model name), in the app and in the nanobot CLI.</source>
        <translation>{entry} 提供 {model}（按模型名称选择），在本应用和 nanobot CLI 中都是如此。</translation>
    </message>
    <message>
        <source>{first} and {second} would both be written as providers.custom: the nanobot CLI keeps one OpenAI-compatible server there. Keep one of them.</source>
        <translation>{first} 和 {second} 都会被写入 providers.custom：nanobot CLI 在那里只保存一个 OpenAI 兼容服务器。请只保留其中一个。</translation>
    </message>
    <message>
        <source>{provider} is listed twice: keep one.</source>
        <translation>{provider} 列出了两次：请只保留一个。</translation>
    </message>
    <message>
        <source>Connection status</source>
        <translation>连接状态</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <source>Show or hide the API key</source>
        <translation>显示或隐藏 API 密钥</translation>
    </message>
    <message>
        <source>Model id, e.g. gpt-4.1-mini</source>
        <translation>模型 ID，例如 gpt-4.1-mini</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Refresh models</source>
        <translation>刷新模型</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <source>Provider:</source>
        <translation>服务商：</translation>
    </message>
    <message>
        <source>Base URL:</source>
        <translation>基础 URL：</translation>
    </message>
    <message>
        <source>API key:</source>
        <translation>API 密钥：</translation>
    </message>
    <message>
        <source>Model:</source>
        <translation>模型：</translation>
    </message>
    <message>
        <source>Saved as:</source>
        <translation>保存为：</translation>
    </message>
    <message>
        <source>{provider} needs an API key (or choose a local server preset)</source>
        <translation>{provider} 需要 API 密钥（或选择本地服务器预设）</translation>
    </message>
    <message>
        <source>Enter a model id, or pick one after &quot;Refresh models&quot;</source>
        <translation>请输入模型 ID，或在“刷新模型”后选择一个</translation>
    </message>
    <message>
        <source>Not needed for a local server (optional)</source>
        <translation>本地服务器无需填写（可选）</translation>
    </message>
    <message>
        <source>providers.{entry}, a form both the app and the nanobot CLI run (a local server gets the placeholder key &quot;no-key&quot;); agents.defaults.provider stays &quot;auto&quot; when nanobot&apos;s rules pick it for the model</source>
        <translation>providers.{entry}，本应用和 nanobot CLI 都能运行的形式（本地服务器使用占位密钥 &quot;no-key&quot;）；当 nanobot 的规则为该模型选中它时，agents.defaults.provider 保持 &quot;auto&quot;</translation>
    </message>
    <message>
        <source>providers.{entry}, a form both the app and the nanobot CLI run; agents.defaults.provider stays &quot;auto&quot; when nanobot&apos;s rules pick it for the model</source>
        <translation>providers.{entry}，本应用和 nanobot CLI 都能运行的形式；当 nanobot 的规则为该模型选中它时，agents.defaults.provider 保持 &quot;auto&quot;</translation>
    </message>
    <message>
        <source>Hide</source>
        <translation>隐藏</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>Testing the connection…</source>
        <translation>正在测试连接…</translation>
    </message>
    <message>
        <source>Loading models…</source>
        <translation>正在加载模型…</translation>
    </message>
    <message>
        <source>The endpoint check failed: {reason}</source>
        <translation>端点检查失败：{reason}</translation>
    </message>
    <message>
        <source>Connected: 0 models (the server has none yet; for Ollama run `ollama pull &lt;model&gt;` first)</source>
        <translation>已连接：0 个模型（服务器上还没有模型；Ollama 请先运行 `ollama pull &lt;model&gt;`）</translation>
    </message>
    <message>
        <source>Loaded 0 models from the endpoint (the server has none yet; for Ollama run `ollama pull &lt;model&gt;` first)</source>
        <translation>已从端点加载 0 个模型（服务器上还没有模型；Ollama 请先运行 `ollama pull &lt;model&gt;`）</translation>
    </message>
    <message>
        <source>Connected: %n model(s)</source>
        <translation>已连接：%n 个模型</translation>
    </message>
    <message>
        <source>Loaded %n model(s) from the endpoint</source>
        <translation>已从端点加载 %n 个模型</translation>
    </message>
    <message>
        <source>{result}; &apos;{model}&apos; is not one of them</source>
        <translation>{result}；其中没有“{model}”</translation>
    </message>
    <message>
        <source>Shell command sandbox</source>
        <translation>命令沙箱</translation>
    </message>
    <message>
        <source>{sandbox}. With the workspace restriction on, commands can write only inside the workspace.</source>
        <translation>{sandbox}。开启工作区限制后，命令只能在工作区内写入。</translation>
    </message>
    <message>
        <source>{sandbox}. Shell commands always ask first.</source>
        <translation>{sandbox}。命令总是先询问。</translation>
    </message>
    <message>
        <source>In the sandbox a command can read the system&apos;s programs and libraries, write only the workspace and its own empty /tmp, and use the network if allowed below. It cannot read your home, the config folder (API keys) or the app&apos;s files, cannot change the app&apos;s state (.nanobot), cannot use files with other hard links, and cannot reach any local service&apos;s socket: D-Bus, X11/Wayland, audio, ssh-agent, gpg-agent, this app.</source>
        <translation>在沙箱中，命令可以读取系统的程序和库，只能写入工作区和它自己的空 /tmp，并在下方允许时使用网络。它不能读取你的主目录、配置文件夹（API 密钥）或本应用的文件，不能更改本应用的状态（.nanobot），不能使用有其他硬链接的文件，也无法连接任何本地服务的套接字：D-Bus、X11/Wayland、音频、ssh-agent、gpg-agent、本应用。</translation>
    </message>
    <message>
        <source>Sandbox shell commands even when the workspace restriction is off</source>
        <translation>即使关闭工作区限制，也在沙箱中运行命令</translation>
    </message>
    <message>
        <source>Sandboxed commands may use the network</source>
        <translation>沙箱中的命令可以访问网络</translation>
    </message>
    <message>
        <source>nanobot workspace</source>
        <translation>nanobot 工作区</translation>
    </message>
    <message>
        <source>nanobot 0.3 workspace</source>
        <translation>nanobot 0.3 工作区</translation>
    </message>
    <message>
        <source>nanobot 0.1.4 workspace</source>
        <translation>nanobot 0.1.4 工作区</translation>
    </message>
    <message>
        <source>Sessions are kept in the workspace&apos;s sessions/ folder and the history log in memory/HISTORY.md, as nanobot 0.1.4 keeps them.</source>
        <translation>会话保存在工作区的 sessions/ 文件夹中，历史日志保存在 memory/HISTORY.md 中，与 nanobot 0.1.4 的方式相同。</translation>
    </message>
    <message>
        <source>(Decided because {reason}.)</source>
        <translation>（判断依据：{reason}。）</translation>
    </message>
    <message>
        <source>Sessions are kept in {folder}, the history log in memory/history.jsonl, and Dream&apos;s versions of MEMORY.md, SOUL.md and USER.md in the workspace&apos;s git repository, as nanobot 0.3 keeps them. (Decided because {reason}.)</source>
        <translation>会话保存在 {folder}，历史日志保存在 memory/history.jsonl，Dream 对 MEMORY.md、SOUL.md 和 USER.md 的各个版本保存在工作区的 git 仓库中，与 nanobot 0.3 的方式相同。（判断依据：{reason}。）</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个 token</translation>
    </message>
    <message>
        <source>How much of the model&apos;s context the conversation may fill before older messages are summarised into history.jsonl</source>
        <translation>对话可占用模型上下文的大小，超出后较早的消息会被总结到 history.jsonl 中</translation>
    </message>
    <message>
        <source>Context window:</source>
        <translation>上下文窗口：</translation>
    </message>
    <message>
        <source>Dream rewrites MEMORY.md, SOUL.md and USER.md from the history log</source>
        <translation>Dream 根据历史日志重写 MEMORY.md、SOUL.md 和 USER.md</translation>
    </message>
    <message>
        <source> h</source>
        <translation> 小时</translation>
    </message>
    <message>
        <source>the agent&apos;s model</source>
        <translation>代理的模型</translation>
    </message>
    <message>
        <source>A model preset name for Dream runs (agents.defaults.dream.modelOverride)</source>
        <translation>Dream 运行时使用的模型预设名称（agents.defaults.dream.modelOverride）</translation>
    </message>
    <message>
        <source>Dream:</source>
        <translation>Dream：</translation>
    </message>
    <message>
        <source>Dream every:</source>
        <translation>Dream 间隔：</translation>
    </message>
    <message>
        <source>Dream model:</source>
        <translation>Dream 模型：</translation>
    </message>
    <message>
        <source>Dream itself runs in the nanobot 0.3 gateway; each of its edits appears as a version in the Memory view, and your own saves there are committed the same way.</source>
        <translation>Dream 本身在 nanobot 0.3 网关中运行；它的每次修改都会在“记忆”视图中显示为一个版本，你在那里保存的内容也会以同样方式提交。</translation>
    </message>
    <message>
        <source>Memory per process</source>
        <translation>每个进程的内存</translation>
    </message>
    <message>
        <source> MB</source>
        <translation> MB</translation>
    </message>
    <message>
        <source>Processes</source>
        <translation>进程数</translation>
    </message>
    <message>
        <source>Open files per process</source>
        <translation>每个进程打开的文件数</translation>
    </message>
    <message>
        <source>CPU time per process</source>
        <translation>每个进程的 CPU 时间</translation>
    </message>
    <message>
        <source>Largest file written</source>
        <translation>可写入的最大文件</translation>
    </message>
    <message>
        <source>Command limits</source>
        <translation>命令限制</translation>
    </message>
    <message>
        <source>Each sandboxed command, with all it starts, stops at these limits and the agent is told which one (0: no limit).</source>
        <translation>每个沙箱中的命令（连同它启动的一切）到达这些限制时会被停止，并告诉智能体是哪一项（0：不限制）。</translation>
    </message>
    <message>
        <source>Processes are counted by a cgroup of each call (cgroup v2, delegated).</source>
        <translation>进程数由每次调用各自的 cgroup 计数（cgroup v2，已委派）。</translation>
    </message>
    <message>
        <source>Processes are counted by a cgroup of each call (cgroup v1 pids).</source>
        <translation>进程数由每次调用各自的 cgroup 计数（cgroup v1 pids）。</translation>
    </message>
    <message>
        <source>Processes are counted per user (RLIMIT_NPROC); no cgroup can be made here, and the limit does not bind root.</source>
        <translation>进程数按用户计数（RLIMIT_NPROC）；此处无法创建 cgroup，且该限制对 root 无效。</translation>
    </message>
    <message>
        <source>none (e.g. 192.168.1.0/24, 127.0.0.1)</source>
        <translation>无（例如 192.168.1.0/24, 127.0.0.1）</translation>
    </message>
    <message>
        <source>web_fetch refuses loopback, private and link-local addresses unless a network here holds them.</source>
        <translation>web_fetch 拒绝访问回环、私有和链路本地地址，除非这里列出的网络包含它们。</translation>
    </message>
    <message>
        <source>Local networks web_fetch may reach</source>
        <translation>web_fetch 可访问的本地网络</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Remove this provider (its key is cleared when you save)</source>
        <translation>移除此服务商（保存时清除其密钥）</translation>
    </message>
    <message>
        <source>{provider} needs an API key</source>
        <translation>{provider} 需要 API 密钥</translation>
    </message>
    <message>
        <source>More providers</source>
        <translation>更多服务商</translation>
    </message>
    <message>
        <source>Each keeps its own key and URL; their models appear in the model switcher beside the default&apos;s.</source>
        <translation>每个服务商保留自己的密钥和 URL；它们的模型与默认服务商的模型一起出现在模型切换器中。</translation>
    </message>
    <message>
        <source>Add a provider</source>
        <translation>添加服务商</translation>
    </message>
</context>
<context>
    <name>Shortcuts</name>
    <message>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <source>Search shortcuts (an action or a key)</source>
        <translation>搜索快捷键（操作或按键）</translation>
    </message>
    <message>
        <source>Search shortcuts</source>
        <translation>搜索快捷键</translation>
    </message>
    <message>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>按键</translation>
    </message>
    <message>
        <source>What it does</source>
        <translation>作用</translation>
    </message>
</context>
<context>
    <name>Skills</name>
    <message>
        <source>Broken: {error}</source>
        <translation>已损坏：{error}</translation>
    </message>
    <message>
        <source>Missing {requirements}</source>
        <translation>缺少 {requirements}</translation>
    </message>
    <message>
        <source>Unavailable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>Available</source>
        <translation>可用</translation>
    </message>
    <message>
        <source>Built-in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>Workspace (overrides built-in)</source>
        <translation>工作区（覆盖内置）</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>On</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>Skill</source>
        <translation>技能</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Always on</source>
        <translation>始终启用</translation>
    </message>
    <message>
        <source>Off</source>
        <translation>关</translation>
    </message>
    <message>
        <source>Not always on</source>
        <translation>非始终启用</translation>
    </message>
    <message>
        <source>Enabled: the agent is told about this skill</source>
        <translation>已启用：代理会知道这个技能</translation>
    </message>
    <message>
        <source>Disabled: left out of the agent&apos;s prompt</source>
        <translation>已停用：不会写进代理的提示词</translation>
    </message>
    <message>
        <source>Its instructions are put into every conversation (when available and enabled)</source>
        <translation>它的说明会放进每一次对话（在可用且已启用时）</translation>
    </message>
    <message>
        <source>Unsaved edits</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <source>This skill cannot be used until its header is fixed: </source>
        <translation>修复文件头之前无法使用这个技能：</translation>
    </message>
    <message>
        <source>the SKILL.md header is broken — </source>
        <translation>SKILL.md 的文件头有误 —— </translation>
    </message>
    <message>
        <source>Type a name for the skill&apos;s folder.</source>
        <translation>请为技能文件夹输入名称。</translation>
    </message>
    <message>
        <source>Keep the name under {count} characters.</source>
        <translation>名称请少于 {count} 个字符。</translation>
    </message>
    <message>
        <source>Use letters, digits, &apos;-&apos;, &apos;_&apos; or &apos;.&apos;, starting with a letter or digit (no spaces or slashes, no &apos;.&apos; at the end).</source>
        <translation>请使用字母、数字、“-”、“_”或“.”，并以字母或数字开头（不能有空格或斜杠，结尾不能是“.”）。</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is a reserved file name on Windows; pick another.</source>
        <translation>“{name}”是 Windows 的保留文件名；请换一个。</translation>
    </message>
    <message>
        <source>skills/{name} already exists; pick another name.</source>
        <translation>skills/{name} 已存在；请换一个名称。</translation>
    </message>
    <message>
        <source>New skill…</source>
        <translation>新建技能…</translation>
    </message>
    <message>
        <source>Create skills/&lt;name&gt;/SKILL.md from a template</source>
        <translation>从模板创建 skills/&lt;name&gt;/SKILL.md</translation>
    </message>
    <message>
        <source>Copy to workspace</source>
        <translation>复制到工作区</translation>
    </message>
    <message>
        <source>Make an editable copy of this built-in skill; the copy overrides it</source>
        <translation>为这个内置技能创建可编辑的副本；副本会覆盖它</translation>
    </message>
    <message>
        <source>skill-name (folder name)</source>
        <translation>skill-name（文件夹名）</translation>
    </message>
    <message>
        <source>Create</source>
        <translation>创建</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Select a skill to read or edit its SKILL.md.</source>
        <translation>选择一个技能，阅读或编辑它的 SKILL.md。</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>Could not list the skills ({error}). The list is read again at the next change.</source>
        <translation>无法列出技能（{error}）。下次有更改时会重新读取列表。</translation>
    </message>
    <message>
        <source>Could not save the setting for &apos;{name}&apos; ({error}). Check that desktop.json beside the config can be written, then try again.</source>
        <translation>无法保存“{name}”的设置（{error}）。请确认配置旁边的 desktop.json 可以写入，然后再试一次。</translation>
    </message>
    <message>
        <source>built-in skills are read-only here; use “Copy to workspace” to change one</source>
        <translation>内置技能在这里是只读的；要修改，请使用“复制到工作区”</translation>
    </message>
    <message>
        <source>Go to line {line}</source>
        <translation>转到第 {line} 行</translation>
    </message>
    <message>
        <source>This will override the built-in skill &apos;{name}&apos;.</source>
        <translation>这会覆盖内置技能“{name}”。</translation>
    </message>
    <message>
        <source>Creates skills/{name}/{file} from the template.</source>
        <translation>将从模板创建 skills/{name}/{file}。</translation>
    </message>
    <message>
        <source>Could not create skills/{name}: {error}</source>
        <translation>无法创建 skills/{name}：{error}</translation>
    </message>
    <message>
        <source>Could not read the built-in skill &apos;{name}&apos;: {error}</source>
        <translation>无法读取内置技能“{name}”：{error}</translation>
    </message>
</context>
<context>
    <name>Startup</name>
    <message>
        <source>nanobot cannot start</source>
        <translation>nanobot 无法启动</translation>
    </message>
    <message>
        <source>The workspace could not be opened:

{error}</source>
        <translation>无法打开工作区：

{error}</translation>
    </message>
    <message>
        <source>The configuration could not be loaded:

{error}

The file was left untouched. Fix it (or move it away to start the first-run setup again), then start nanobot Desktop again.</source>
        <translation>无法加载配置：

{error}

该文件保持原样。请修复它（或把它移走，以重新进行首次设置），然后再次启动 nanobot Desktop。</translation>
    </message>
</context>
<context>
    <name>Storage</name>
    <message>
        <source>The disk holding {folder} is full: free some space.</source>
        <translation>{folder} 所在的磁盘已满：请释放一些空间。</translation>
    </message>
    <message>
        <source>Your disk quota for {folder} is used up: free some space.</source>
        <translation>你在 {folder} 的磁盘配额已用完：请释放一些空间。</translation>
    </message>
    <message>
        <source>{path} cannot grow any larger (the file size limit was reached): raise the limit or move the file away.</source>
        <translation>{path} 无法再增大（已达到文件大小上限）：请提高上限或移走该文件。</translation>
    </message>
    <message>
        <source>{folder} is on a read-only file system: make it writable or use another folder.</source>
        <translation>{folder} 位于只读文件系统上：请将其设为可写，或使用其他文件夹。</translation>
    </message>
    <message>
        <source>You have no permission to write {path}: fix the permissions of the file and its folder.</source>
        <translation>你没有写入 {path} 的权限：请修正该文件及其文件夹的权限。</translation>
    </message>
    <message>
        <source>The disk holding {path} reported an I/O error: check the disk.</source>
        <translation>{path} 所在的磁盘报告了 I/O 错误：请检查磁盘。</translation>
    </message>
    <message>
        <source>{path} could not be written ({reason}): check the disk and the folder.</source>
        <translation>无法写入 {path}（{reason}）：请检查磁盘和文件夹。</translation>
    </message>
</context>
<context>
    <name>Subagents</name>
    <message>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>Label</source>
        <translation>标签</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Duration</source>
        <translation>用时</translation>
    </message>
    <message>
        <source>{label} (id {id}), started {time}</source>
        <translation>{label}（ID {id}），开始于 {time}</translation>
    </message>
    <message>
        <source>(%n more character(s))</source>
        <translation>（还有 %n 个字符）</translation>
    </message>
    <message>
        <source>result ({status}): {result}</source>
        <translation>结果（{status}）：{result}</translation>
    </message>
    <message>
        <source>cancelled before it finished</source>
        <translation>在完成前已取消</translation>
    </message>
    <message>
        <source>Subagents</source>
        <translation>子代理</translation>
    </message>
    <message>
        <source>No subagents yet. The agent starts one with the spawn tool for long background work; it shows up here while it runs.</source>
        <translation>还没有子代理。代理会用 spawn 工具为耗时的后台工作启动子代理；子代理运行时会显示在这里。</translation>
    </message>
    <message>
        <source>Select a subagent to see what it did.</source>
        <translation>选择一个子代理以查看它做了什么。</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Stop the selected subagent (its session is told it was cancelled)</source>
        <translation>停止所选子代理（会告知其会话已取消）</translation>
    </message>
    <message>
        <source>Open session</source>
        <translation>打开会话</translation>
    </message>
    <message>
        <source>Show the conversation that started this subagent</source>
        <translation>显示启动此子代理的对话</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
</context>
<context>
    <name>TextConflict</name>
    <message>
        <source>{file} was changed on two machines</source>
        <translation>{file} 在两台机器上被修改</translation>
    </message>
    <message>
        <source>{file} was changed on two machines before they could sync; the sync tool kept one version under the file&apos;s name and the other, from {device}, beside it. Nothing has been overwritten: choose what to keep. The other version then goes to the trash in the workspace.</source>
        <translation>{file} 在两台机器同步之前分别被修改；同步工具以原文件名保留了一个版本，另一个来自 {device} 的版本放在旁边。没有任何内容被覆盖：请选择要保留的内容。另一个版本随后会移到工作区的回收站。</translation>
    </message>
    <message>
        <source>{file} as it is now</source>
        <translation>{file} 的当前内容</translation>
    </message>
    <message>
        <source>The other version, from {device}</source>
        <translation>另一个版本，来自 {device}</translation>
    </message>
    <message>
        <source>Before the conflict ({which})</source>
        <translation>冲突之前（{which}）</translation>
    </message>
    <message>
        <source>No version from before the conflict: {why}.</source>
        <translation>没有冲突之前的版本：{why}。</translation>
    </message>
    <message>
        <source>Text to keep (edit it if you want parts of both):</source>
        <translation>要保留的文本（如需两边各取一部分，可直接编辑）：</translation>
    </message>
    <message>
        <source>Text to keep</source>
        <translation>要保留的文本</translation>
    </message>
    <message>
        <source>Start from the file as it is</source>
        <translation>以当前文件为起点</translation>
    </message>
    <message>
        <source>Start from the other version</source>
        <translation>以另一个版本为起点</translation>
    </message>
    <message>
        <source>Keep this text</source>
        <translation>保留此文本</translation>
    </message>
    <message>
        <source>Decide later</source>
        <translation>稍后决定</translation>
    </message>
    <message>
        <source>Could not keep the text of {file}: {error}</source>
        <translation>无法保留 {file} 的文本：{error}</translation>
    </message>
</context>
<context>
    <name>ToolImages</name>
    <message>
        <source>[image: {name}]</source>
        <translation>[图片：{name}]</translation>
    </message>
</context>
<context>
    <name>Tray</name>
    <message>
        <source>nanobot keeps running in the background</source>
        <translation>nanobot 在后台继续运行</translation>
    </message>
    <message>
        <source>Open it again with “Show or Hide the Window” in its menu entry, or run nanobot-desktop --toggle.</source>
        <translation>用菜单项中的“显示或隐藏窗口”重新打开，或运行 nanobot-desktop --toggle。</translation>
    </message>
    <message>
        <source>nanobot keeps running in the tray</source>
        <translation>nanobot 会在托盘中继续运行</translation>
    </message>
    <message>
        <source>Click the tray icon to open the window again; Quit is in its menu.</source>
        <translation>点击托盘图标可重新打开窗口；“退出”在它的菜单中。</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>Show window</source>
        <translation>显示窗口</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新建对话</translation>
    </message>
    <message>
        <source>Run heartbeat now</source>
        <translation>立即运行心跳</translation>
    </message>
    <message>
        <source>Pause heartbeat</source>
        <translation>暂停心跳</translation>
    </message>
    <message>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <source>Hide window</source>
        <translation>隐藏窗口</translation>
    </message>
    <message>
        <source>Resume heartbeat</source>
        <translation>恢复心跳</translation>
    </message>
    <message>
        <source>Allow once</source>
        <translation>允许一次</translation>
    </message>
    <message>
        <source>Deny</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <source>`{command}` — unanswered, it counts as Deny at {time}.</source>
        <translation>`{command}` —— 如果到 {time} 仍未回答，将按“拒绝”处理。</translation>
    </message>
    <message>
        <source>Show in window</source>
        <translation>在窗口中显示</translation>
    </message>
    <message>
        <source>{text} Answer from the tray menu or the window.</source>
        <translation>{text} 请在托盘菜单或窗口中回答。</translation>
    </message>
    <message>
        <source>skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <source>skip</source>
        <translation>跳过</translation>
    </message>
    <message>
        <source>ran</source>
        <translation>已运行</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <source>waiting for you</source>
        <translation>等待你的回应</translation>
    </message>
    <message>
        <source>last heartbeat {time} ({outcome})</source>
        <translation>上次心跳 {time}（{outcome}）</translation>
    </message>
    <message>
        <source>heartbeat off</source>
        <translation>心跳已关闭</translation>
    </message>
    <message>
        <source>heartbeat paused</source>
        <translation>心跳已暂停</translation>
    </message>
    <message>
        <source>next {time}</source>
        <translation>下次 {time}</translation>
    </message>
    <message>
        <source>Heartbeat failed</source>
        <translation>心跳失败</translation>
    </message>
    <message>
        <source>Heartbeat</source>
        <translation>心跳</translation>
    </message>
    <message>
        <source>Scheduled task failed: {name}</source>
        <translation>定时任务失败：{name}</translation>
    </message>
    <message>
        <source>Scheduled: {name}</source>
        <translation>定时任务：{name}</translation>
    </message>
    <message>
        <source>today</source>
        <translation>今天</translation>
    </message>
    <message>
        <source>this month</source>
        <translation>本月</translation>
    </message>
    <message>
        <source>${spent} of ${limit} spent {period}.</source>
        <translation>{period}已花费 ${spent}，预算 ${limit}。</translation>
    </message>
    <message>
        <source>Usage budget spent</source>
        <translation>用量预算已用完</translation>
    </message>
    <message>
        <source>The heartbeat, scheduled jobs and subagents wait until you resume them (Usage page).</source>
        <translation>心跳、定时任务和子代理将暂停，直到你恢复它们（“用量”页面）。</translation>
    </message>
    <message>
        <source>Usage budget at {percent} %</source>
        <translation>用量预算已达 {percent} %</translation>
    </message>
    <message>
        <source>Scheduled task</source>
        <translation>定时任务</translation>
    </message>
    <message>
        <source>Keep nanobot running?</source>
        <translation>让 nanobot 继续运行？</translation>
    </message>
    <message>
        <source>This desktop has no tray, so nanobot cannot wait there. Keep it running in the background (the heartbeat and scheduled tasks go on), or quit?</source>
        <translation>此桌面没有托盘，nanobot 无法在托盘中等待。要在后台继续运行（心跳和定时任务照常进行），还是退出？</translation>
    </message>
    <message>
        <source>Bring the window back with “Show or Hide the Window” in the app menu entry, or by running nanobot-desktop --toggle. Settings → Appearance changes this later.</source>
        <translation>用应用菜单项中的“显示或隐藏窗口”或运行 nanobot-desktop --toggle 让窗口重新出现。之后可在 设置 → 外观 中更改。</translation>
    </message>
    <message>
        <source>Keep running</source>
        <translation>继续运行</translation>
    </message>
</context>
<context>
    <name>Updates</name>
    <message>
        <source>nanobot Desktop {current} is the newest version.</source>
        <translation>nanobot Desktop {current} 已是最新版本。</translation>
    </message>
    <message>
        <source>Version {new} is downloaded and verified. It starts the next time you open nanobot Desktop; version {current} is kept, and Help → Roll back goes back to it.</source>
        <translation>版本 {new} 已下载并通过验证，将在下次打开 nanobot Desktop 时启动；版本 {current} 会被保留，可通过“帮助 → 回退”回到该版本。</translation>
    </message>
    <message>
        <source>Version {new} is available (this is {current}). Get it with: {detail}</source>
        <translation>有新版本 {new}（当前为 {current}）。获取方式：{detail}</translation>
    </message>
    <message>
        <source>This copy of nanobot Desktop was built without the release keys&apos; root metadata, so it cannot check for signed updates.</source>
        <translation>此 nanobot Desktop 构建未包含发布密钥的根元数据，因此无法检查签名更新。</translation>
    </message>
    <message>
        <source>Could not reach the update server ({detail}); nothing was changed.</source>
        <translation>无法连接更新服务器（{detail}）；未做任何更改。</translation>
    </message>
    <message>
        <source>The update server&apos;s signed metadata has expired ({detail}); the update was refused and nothing was changed.</source>
        <translation>更新服务器的签名元数据已过期（{detail}）；已拒绝此次更新，未做任何更改。</translation>
    </message>
    <message>
        <source>The update server&apos;s metadata is not signed by the keys this app trusts ({detail}); the update was refused and nothing was changed.</source>
        <translation>更新服务器的元数据未由本应用信任的密钥签名（{detail}）；已拒绝此次更新，未做任何更改。</translation>
    </message>
    <message>
        <source>The downloaded archive of version {new} does not match its signed length and hash; it was discarded and nothing was changed.</source>
        <translation>下载的版本 {new} 归档与其签名的长度和哈希不符；已丢弃，未做任何更改。</translation>
    </message>
    <message>
        <source>Could not prepare version {new} ({detail}); the installed app was not changed.</source>
        <translation>无法准备版本 {new}（{detail}）；已安装的应用未被更改。</translation>
    </message>
    <message>
        <source>This copy was installed with {tool}; go back to an older version with that tool.</source>
        <translation>此副本是通过 {tool} 安装的；请用该工具回到旧版本。</translation>
    </message>
    <message>
        <source>There is no previous version to roll back to: none was kept, because this copy has not been updated yet.</source>
        <translation>没有可回退的上一个版本：此副本尚未更新过，因此没有保留旧版本。</translation>
    </message>
    <message>
        <source>Version {version} starts the next time you open nanobot Desktop.</source>
        <translation>版本 {version} 将在下次打开 nanobot Desktop 时启动。</translation>
    </message>
    <message>
        <source>Updates</source>
        <translation>更新</translation>
    </message>
</context>
<context>
    <name>Usage</name>
    <message>
        <source>Usage per day, by source</source>
        <translation>每日用量（按来源）</translation>
    </message>
    <message>
        <source>Prices per million tokens (US dollars)</source>
        <translation>每百万 token 价格（美元）</translation>
    </message>
    <message>
        <source>Prices</source>
        <translation>价格</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Input</source>
        <translation>输入</translation>
    </message>
    <message>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <source>Cache read</source>
        <translation>缓存读取</translation>
    </message>
    <message>
        <source>Cache write</source>
        <translation>缓存写入</translation>
    </message>
    <message>
        <source>Add a model</source>
        <translation>添加模型</translation>
    </message>
    <message>
        <source>An empty input or output price means no price: those calls show &quot;no price&quot;, not $0. An empty cache price bills cached tokens as input.</source>
        <translation>输入或输出价格留空表示没有价格：这些调用显示“无价格”，而不是 $0。缓存价格留空时，缓存的 token 按输入计费。</translation>
    </message>
    <message>
        <source>Row {row} ({model}): a price must be a number</source>
        <translation>第 {row} 行（{model}）：价格必须是数字</translation>
    </message>
    <message>
        <source>Row {row} ({model}): a price cannot be negative</source>
        <translation>第 {row} 行（{model}）：价格不能为负数</translation>
    </message>
    <message>
        <source>Usage budget</source>
        <translation>用量预算</translation>
    </message>
    <message>
        <source>Daily limit</source>
        <translation>每日上限</translation>
    </message>
    <message>
        <source>Monthly limit</source>
        <translation>每月上限</translation>
    </message>
    <message>
        <source>At 80 % you get a notification. At 100 % the heartbeat, scheduled jobs and subagents wait until you resume them on the Usage page; chats are never stopped. Only calls with a price count.</source>
        <translation>达到 80 % 时会通知你。达到 100 % 时，心跳、定时任务和子代理将暂停，直到你在“用量”页面恢复它们；对话永远不会被停止。只计算有价格的调用。</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>无上限</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Heartbeat</source>
        <translation>心跳</translation>
    </message>
    <message>
        <source>Scheduled</source>
        <translation>定时任务</translation>
    </message>
    <message>
        <source>Subagents</source>
        <translation>子代理</translation>
    </message>
    <message>
        <source>CLI: chats</source>
        <translation>命令行：对话</translation>
    </message>
    <message>
        <source>CLI: API</source>
        <translation>命令行：API</translation>
    </message>
    <message>
        <source>CLI: scheduled</source>
        <translation>命令行：定时任务</translation>
    </message>
    <message>
        <source>CLI: Dream</source>
        <translation>命令行：Dream</translation>
    </message>
    <message>
        <source>CLI: system</source>
        <translation>命令行：系统</translation>
    </message>
    <message>
        <source>no price</source>
        <translation>无价格</translation>
    </message>
    <message>
        <source>not reported</source>
        <translation>未报告</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Calls</source>
        <translation>调用</translation>
    </message>
    <message>
        <source>Cached</source>
        <translation>缓存</translation>
    </message>
    <message>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <source>{input} input tokens ({cached} from the cache), {output} output tokens</source>
        <translation>{input} 个输入 token（其中 {cached} 个来自缓存），{output} 个输出 token</translation>
    </message>
    <message>
        <source>%n call(s) estimated: the endpoint reported no usage</source>
        <translation>%n 次调用为估算值：端点未报告用量</translation>
    </message>
    <message>
        <source>%n call(s) without a price (set one with Prices…)</source>
        <translation>%n 次调用没有价格（可在“价格…”中设置）</translation>
    </message>
    <message>
        <source>Scheduled: {name}</source>
        <translation>定时任务：{name}</translation>
    </message>
    <message>
        <source>{tokens} tokens</source>
        <translation>{tokens} 个 token</translation>
    </message>
    <message>
        <source>{cost} · %n call(s)</source>
        <translation>{cost} · %n 次调用</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>今天</translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation>最近 7 天</translation>
    </message>
    <message>
        <source>Last 30 days</source>
        <translation>最近 30 天</translation>
    </message>
    <message>
        <source>Resume background work</source>
        <translation>恢复后台任务</translation>
    </message>
    <message>
        <source>Let the heartbeat, scheduled jobs and subagents run again although the budget is spent</source>
        <translation>即使预算已用完，也让心跳、定时任务和子代理重新运行</translation>
    </message>
    <message>
        <source>Chart shows</source>
        <translation>图表显示</translation>
    </message>
    <message>
        <source>Tokens per day</source>
        <translation>每日 token</translation>
    </message>
    <message>
        <source>Cost per day</source>
        <translation>每日费用</translation>
    </message>
    <message>
        <source>Prices…</source>
        <translation>价格…</translation>
    </message>
    <message>
        <source>Budget…</source>
        <translation>预算…</translation>
    </message>
    <message>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <source>Usage by model</source>
        <translation>按模型统计的用量</translation>
    </message>
    <message>
        <source>Usage by conversation</source>
        <translation>按对话统计的用量</translation>
    </message>
    <message>
        <source>Double-click a conversation to open it</source>
        <translation>双击对话即可打开</translation>
    </message>
    <message>
        <source>By model</source>
        <translation>按模型</translation>
    </message>
    <message>
        <source>By conversation</source>
        <translation>按对话</translation>
    </message>
    <message>
        <source>Usage</source>
        <translation>用量</translation>
    </message>
    <message>
        <source>Input read from the prompt cache (30 days): {share}</source>
        <translation>从提示缓存读取的输入（30 天）：{share}</translation>
    </message>
    <message>
        <source>Background work is paused: {why}.</source>
        <translation>后台任务已暂停：{why}。</translation>
    </message>
    <message>
        <source>Usage record: {problem}</source>
        <translation>用量记录：{problem}</translation>
    </message>
    <message>
        <source>Export usage as CSV</source>
        <translation>将用量导出为 CSV</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>The CSV file was not written: {why}</source>
        <translation>未能写入 CSV 文件：{why}</translation>
    </message>
    <message>
        <source>Exported to {path}</source>
        <translation>已导出到 {path}</translation>
    </message>
</context>
<context>
    <name>Window</name>
    <message>
        <source>Syncthing syncs this workspace with: {devices}</source>
        <translation>Syncthing 正在与以下设备同步此工作区：{devices}</translation>
    </message>
    <message>
        <source>no other device</source>
        <translation>没有其他设备</translation>
    </message>
    <message>
        <source>● Working…  (Esc to stop)</source>
        <translation>● 处理中…（按 Esc 停止）</translation>
    </message>
    <message>
        <source>no model configured</source>
        <translation>未配置模型</translation>
    </message>
    <message>
        <source>Model: {model}</source>
        <translation>模型：{model}</translation>
    </message>
    <message>
        <source>Workspace: {path}</source>
        <translation>工作区：{path}</translation>
    </message>
    <message>
        <source>Read and written in this layout because {reason}</source>
        <translation>按此布局读写，原因：{reason}</translation>
    </message>
    <message>
        <source>Context {used} / {window}</source>
        <translation>上下文 {used} / {window}</translation>
    </message>
    <message>
        <source>The last prompt of this chat used {used} of the model&apos;s {window}-token context window; older messages are left out when it would not fit</source>
        <translation>此对话的上一次提示词用了模型 {window} 个 token 上下文窗口中的 {used} 个；放不下时会省略较早的消息</translation>
    </message>
    <message>
        <source>● {status}  (Esc to stop)</source>
        <translation>● {status}（按 Esc 停止）</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Retrying ({attempt}/{attempts}) in {seconds} s…</source>
        <translation>{seconds} 秒后重试（{attempt}/{attempts}）…</translation>
    </message>
    <message>
        <source>Retrying ({attempt}/{attempts})…</source>
        <translation>正在重试（{attempt}/{attempts}）…</translation>
    </message>
    <message>
        <source>No model can be used yet ({detail}). Open Settings to choose a provider and a model.</source>
        <translation>还没有可用的模型（{detail}）。请打开设置，选择服务商和模型。</translation>
    </message>
    <message>
        <source>Open Settings</source>
        <translation>打开设置</translation>
    </message>
    <message>
        <source>Settings could not be opened ({error}). Reinstall the app with python3 dev.py, then try again.</source>
        <translation>无法打开设置（{error}）。请用 python3 dev.py 重新安装应用，然后再试一次。</translation>
    </message>
    <message>
        <source>About nanobot Desktop</source>
        <translation>关于 nanobot Desktop</translation>
    </message>
    <message>
        <source>nanobot Desktop {version}

A desktop app for the nanobot personal AI agent.
Workspace: {workspace}
Config: {config}</source>
        <translation>nanobot Desktop {version}

nanobot 个人 AI 代理的桌面应用。
工作区：{workspace}
配置：{config}</translation>
    </message>
    <message>
        <source>Some panels could not be loaded ({errors}). The chat works without them; the log (Help → Open log folder) has the details.</source>
        <translation>部分面板无法加载（{errors}）。没有它们对话也能正常使用；详情见日志（帮助 → 打开日志文件夹）。</translation>
    </message>
    <message>
        <source>The heartbeat and scheduled jobs did not start ({error}). Fix the problem named there, then restart the app.</source>
        <translation>心跳和定时任务没有启动（{error}）。请先解决其中提到的问题，然后重启应用。</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Put back in a new chat</source>
        <translation>放回一个新对话</translation>
    </message>
    <message>
        <source>Exported to {path}</source>
        <translation>已导出到 {path}</translation>
    </message>
    <message>
        <source>{file} was changed on two machines (the other version is from {device}); nothing was overwritten.</source>
        <translation>{file} 在两台机器上被修改（另一个版本来自 {device}）；没有任何内容被覆盖。</translation>
    </message>
    <message>
        <source>Compare and choose…</source>
        <translation>比较并选择…</translation>
    </message>
    <message>
        <source>Continue</source>
        <translation>继续</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>忽略</translation>
    </message>
    <message>
        <source>Retry save</source>
        <translation>重新保存</translation>
    </message>
    <message>
        <source>Start anyway</source>
        <translation>仍然开始</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>再试一次</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>{device} ({tool})</source>
        <translation>{device}（{tool}）</translation>
    </message>
    <message>
        <source>another device ({tool})</source>
        <translation>另一台设备（{tool}）</translation>
    </message>
    <message>
        <source>A copy of this conversation from {device} had nothing new; it was moved to the trash.</source>
        <translation>来自 {device} 的这段对话副本没有新内容，已移到回收站。</translation>
    </message>
    <message>
        <source>A copy of a deleted conversation came from {device}; it is in the trash ({file}), where it can be restored.</source>
        <translation>收到来自 {device} 的一段已删除对话的副本；它在回收站中（{file}），可以恢复。</translation>
    </message>
    <message>
        <source>Toolbar</source>
        <translation>工具栏</translation>
    </message>
</context>
<context>
    <name>Workspace</name>
    <message>
        <source>How the agent should work: instructions and rules</source>
        <translation>代理应当如何工作：指令和规则</translation>
    </message>
    <message>
        <source>Personality, tone and values</source>
        <translation>性格、语气和价值观</translation>
    </message>
    <message>
        <source>What the agent knows about you</source>
        <translation>代理对你的了解</translation>
    </message>
    <message>
        <source>Notes on the tools and how to use them</source>
        <translation>关于工具及其用法的说明</translation>
    </message>
    <message>
        <source>Tasks the heartbeat checks periodically</source>
        <translation>心跳定期检查的任务</translation>
    </message>
    <message>
        <source>Identity (read when present, as older nanobot versions did)</source>
        <translation>身份（存在时读取，与旧版 nanobot 相同）</translation>
    </message>
    <message>
        <source>Workspace files</source>
        <translation>工作区文件</translation>
    </message>
    <message>
        <source>Select a file to edit it.</source>
        <translation>选择一个文件进行编辑。</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>Files</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>Skills</source>
        <translation>技能</translation>
    </message>
    <message>
        <source>{about} (nanobot 0.3 does not load it)</source>
        <translation>{about}（nanobot 0.3 不会加载它）</translation>
    </message>
</context>
</TS>
