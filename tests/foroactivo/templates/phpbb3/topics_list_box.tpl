<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/prosilver/topics_list_box.tpl (trimmed: no selection boxes, stickies or avatars) -->
<!-- BEGIN topics_list_box -->
<!-- BEGIN row -->
<!-- BEGIN header_table -->
	<div class="forumbg">
		<div class="inner"><span class="corners-top"><span></span></span>
		<ul class="topiclist topics">
			<li class="header">
				<dl class="icon">
					<dt>{topics_list_box.row.L_TITLE}</dt><dd class="posts">Respuestas</dd><dd class="views">Visitas</dd><dd class="lastpost"><span>Último mensaje</span></dd>
				</dl>
			</li>
		</ul>
		<ul class="topiclist topics bg_none">
<!-- END header_table -->
<!-- BEGIN topic -->
		<li class="row {topics_list_box.row.ROW_ALT_CLASS}">
			<dl class="icon" style="background-image:url('https://illiweb.com/fa/prosilver/topic_read.gif');">
				<dd class="dterm" title="No hay mensajes nuevos">
				<div class="topic-title-container"><h2 class="topic-title hierarchy"><a class="topictitle" href="{topics_list_box.row.U_VIEW_TOPIC}">{topics_list_box.row.TOPIC_TITLE}</a></h2></div>
				<br />
				{topics_list_box.row.GOTO_PAGE_NEW}
				<span class="span-tab">por <strong>{topics_list_box.row.TOPIC_AUTHOR}</strong></span>
				</dd>
				<dd class="posts">{topics_list_box.row.REPLIES} <dfn>Respuestas</dfn></dd>
				<dd class="views">{topics_list_box.row.VIEWS} <dfn>Visitas</dfn></dd>
				<dd class="lastpost">
				<span>{topics_list_box.row.LAST_POST_AUTHOR}&nbsp;<dfn>Último mensaje</dfn>
				{topics_list_box.row.LAST_POST_IMG}<br style="clear:left;" />{topics_list_box.row.LAST_POST_TIME}</span>
				</dd>
			</dl>
		</li>
<!-- END topic -->
<!-- BEGIN footer_table -->
		</ul>
		<span class="corners-bottom"><span></span></span></div>
	</div>
<!-- END footer_table -->
<!-- END row -->
<!-- END topics_list_box -->
<!-- BEGIN switch_no_topics --><div class="panel"><div class="inner"><p><strong>No hay mensajes en este foro.</strong></p></div></div><!-- END switch_no_topics -->
